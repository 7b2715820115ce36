/**
 * Virtual documents for the diff view: a step's previous skill and its candidate, read from the
 * run folder (or from the live event, which can rebuild the previous text). Parameters travel as
 * JSON in the URI query, so a diff tab survives a reload.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { isCandidateOrigin } from '../../protocol/webview';
import { stepCandidateFromFolder, type Origin } from './runFiles';

export const candidateScheme = 'skillopt-candidate';

export interface CandidateUriParams {
  runDir: string;
  step: number;
  origin: Origin;
  side: 'previous' | 'candidate';
  runId?: string;
}

export function candidateUri(p: CandidateUriParams, fileName = 'SKILL.md'): vscode.Uri {
  const label =
    p.side === 'previous' ? 'previous' : p.origin === 'step' ? `step-${p.step}` : p.origin.replace('_', '-');
  return vscode.Uri.from({
    scheme: candidateScheme,
    path: `/${label}/${fileName}`,
    query: JSON.stringify(p),
  });
}

export function parseCandidateUri(uri: vscode.Uri): CandidateUriParams | undefined {
  if (uri.scheme !== candidateScheme) return undefined;
  try {
    const v = JSON.parse(uri.query) as Record<string, unknown>;
    if (typeof v.runDir !== 'string' || typeof v.step !== 'number') return undefined;
    if (!isCandidateOrigin(v.origin)) return undefined;
    if (v.side !== 'previous' && v.side !== 'candidate') return undefined;
    return {
      runDir: v.runDir,
      step: v.step,
      origin: v.origin,
      side: v.side,
      ...(typeof v.runId === 'string' ? { runId: v.runId } : {}),
    };
  } catch {
    return undefined;
  }
}

export function textsKey(runDir: string, step: number, origin: Origin): string {
  return `${runDir}\u0000${origin}\u0000${step}`;
}

export class CandidateContentProvider implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, { previous: string; candidate: string }>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  /** Texts of a live candidate, so the diff shows exactly what the event described. */
  remember(runDir: string, step: number, origin: Origin, previous: string, candidate: string): void {
    this.texts.set(textsKey(runDir, step, origin), { previous, candidate });
  }

  textsOf(runDir: string, step: number, origin: Origin): { previous: string; candidate: string } | undefined {
    const key = textsKey(runDir, step, origin);
    const hit = this.texts.get(key);
    if (hit) return hit;
    const got = stepCandidateFromFolder(runDir, step, origin);
    if (!got) return undefined;
    const texts = { previous: got.previousText, candidate: got.candidateText };
    this.texts.set(key, texts);
    return texts;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const p = parseCandidateUri(uri);
    if (!p) return '';
    const texts = this.textsOf(p.runDir, p.step, p.origin);
    if (!texts) {
      return `SkillOpt could not find this candidate (${p.origin.replace('_', ' ')} at step ${p.step}) in ${p.runDir}.\n`;
    }
    return p.side === 'previous' ? texts.previous : texts.candidate;
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** Opens VS Code's diff editor on a step: previous skill on the left, candidate on the right. */
export async function openCandidateDiff(
  p: { runDir: string; step: number; origin: Origin; runId?: string },
  skillName?: string,
): Promise<void> {
  const fileName = skillName ? basename(skillName) : 'SKILL.md';
  const base = { runDir: p.runDir, step: p.step, origin: p.origin, ...(p.runId ? { runId: p.runId } : {}) };
  const left = candidateUri({ ...base, side: 'previous' }, fileName);
  const right = candidateUri({ ...base, side: 'candidate' }, fileName);
  const what =
    p.origin === 'step'
      ? `step ${p.step} candidate`
      : `${p.origin === 'slow_update' ? 'slow update' : 'meta reflection'} after step ${p.step}`;
  await vscode.commands.executeCommand('vscode.diff', left, right, `${fileName}: previous ↔ ${what}`, {
    preview: true,
  });
}
