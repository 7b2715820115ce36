/**
 * Opens a task's conversation as a readable Markdown preview instead of raw JSON: a read-only
 * virtual document (`skillopt-conversation:<file>.md`) rendered by VS Code's Markdown preview.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { conversationMarkdown } from '../runs/conversationText';
import { errorMessage } from '../log';

const scheme = 'skillopt-conversation';

export function registerConversationView(ctx: Ctx): void {
  ctx.pushExtCleanup(
    vscode.workspace.registerTextDocumentContentProvider(scheme, {
      provideTextDocumentContent(uri: vscode.Uri): string {
        const file = uri.fsPath.replace(/\.md$/, '');
        let records: unknown;
        try {
          records = JSON.parse(readFileSync(file, 'utf8'));
        } catch (err) {
          return `Cannot read ${file}: ${errorMessage(err)}`;
        }
        // predictions/<task id>/conversation.json
        return conversationMarkdown(basename(dirname(file)), records);
      },
    }),
  );
}

/** Shows `conversation.json` at `file` rendered; the raw file stays one click away in the tree. */
export async function showConversation(file: string): Promise<void> {
  const uri = vscode.Uri.file(`${file}.md`).with({ scheme });
  await vscode.commands.executeCommand('markdown.showPreview', uri);
}
