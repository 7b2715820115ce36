/**
 * Documents SkillOpt itself is editing right now (review transitions, applying a skill), so the
 * protected-block warning speaks only about the person's own typing.
 */
import type * as vscode from 'vscode';

const editing = new Map<string, number>();

export function isSelfEdit(uri: vscode.Uri): boolean {
  return (editing.get(uri.toString()) ?? 0) > 0;
}

/** Runs `apply` (a WorkspaceEdit, say) without warning about the protected blocks it touches. */
export async function runWithoutProtectedWarning<T>(uri: vscode.Uri, apply: () => Thenable<T>): Promise<T> {
  const key = uri.toString();
  editing.set(key, (editing.get(key) ?? 0) + 1);
  try {
    return await apply();
  } finally {
    const n = (editing.get(key) ?? 1) - 1;
    if (n > 0) editing.set(key, n);
    else editing.delete(key);
  }
}
