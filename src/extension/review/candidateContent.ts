/**
 * Virtual documents for the diff view: a step's previous skill and its candidate, read from the
 * run folder (or from the live event, which can rebuild the previous text). A skill folder's
 * candidate has one diff per changed file (`file`: its path in the folder; a new file's previous
 * side is empty). Parameters travel as JSON in the URI query, so a diff tab survives a reload.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { isCandidateOrigin } from '../../protocol/webview';
import { candidateFileTexts, otherCandidateFiles, stepCandidateFromFolder, type Origin } from './runFiles';

export const candidateScheme = 'skillopt-candidate';

export interface CandidateUriParams {
  runDir: string;
  step: number;
  origin: Origin;
  side: 'previous' | 'candidate';
  runId?: string;
  /** A skill folder's file other than SKILL.md (relative, `/`-separated). */
  file?: string;
}

export function candidateUri(p: CandidateUriParams, fileName = p.file ?? 'SKILL.md'): vscode.Uri {
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
      ...(typeof v.file === 'string' && v.file ? { file: v.file } : {}),
    };
  } catch {
    return undefined;
  }
}

export function textsKey(runDir: string, step: number, origin: Origin, file = ''): string {
  return `${runDir}\u0000${origin}\u0000${step}\u0000${file}`;
}

type Texts = { previous: string; candidate: string };

export class CandidateContentProvider implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, Texts>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  /** Texts of a live candidate (of one of its files), so the diff shows exactly what the review does. */
  remember(
    runDir: string,
    step: number,
    origin: Origin,
    previous: string,
    candidate: string,
    file?: string,
  ): void {
    this.texts.set(textsKey(runDir, step, origin, file), { previous, candidate });
  }

  textsOf(runDir: string, step: number, origin: Origin, file?: string): Texts | undefined {
    const key = textsKey(runDir, step, origin, file);
    const hit = this.texts.get(key);
    if (hit) return hit;
    let texts: Texts | undefined;
    if (file) texts = candidateFileTexts(runDir, step, origin, file);
    else {
      const got = stepCandidateFromFolder(runDir, step, origin);
      if (got) texts = { previous: got.previousText, candidate: got.candidateText };
    }
    if (texts) this.texts.set(key, texts);
    return texts;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const p = parseCandidateUri(uri);
    if (!p) return '';
    const texts = this.textsOf(p.runDir, p.step, p.origin, p.file);
    if (!texts) {
      const of = p.file ? ` of ${p.file}` : '';
      return `SkillOpt could not find this candidate${of} (${p.origin.replace('_', ' ')} at step ${p.step}) in ${p.runDir}.\n`;
    }
    return p.side === 'previous' ? texts.previous : texts.candidate;
  }

  dispose(): void {
    this.changed.dispose();
  }
}

type DiffTarget = { runDir: string; step: number; origin: Origin; runId?: string };

/**
 * Opens VS Code's diff editor on a step: previous skill on the left, candidate on the right; for a
 * skill folder's file (`file`), that file's previous text (empty when the candidate adds it).
 */
export async function openCandidateDiff(
  p: DiffTarget,
  skillName?: string,
  file?: string,
  preview = true,
): Promise<void> {
  const fileName = file ?? (skillName ? basename(skillName) : 'SKILL.md');
  const base = {
    runDir: p.runDir,
    step: p.step,
    origin: p.origin,
    ...(p.runId ? { runId: p.runId } : {}),
    ...(file ? { file } : {}),
  };
  const left = candidateUri({ ...base, side: 'previous' }, fileName);
  const right = candidateUri({ ...base, side: 'candidate' }, fileName);
  const what =
    p.origin === 'step'
      ? `step ${p.step} candidate`
      : `${p.origin === 'slow_update' ? 'slow update' : 'meta reflection'} after step ${p.step}`;
  await vscode.commands.executeCommand('vscode.diff', left, right, `${fileName}: previous ↔ ${what}`, {
    preview,
  });
}

/** One diff per file the candidate changes: SKILL.md's, then each other file of a skill folder's. */
export async function openCandidateDiffs(p: DiffTarget, skillName?: string): Promise<void> {
  const others = otherCandidateFiles(p.runDir, p.step, p.origin);
  // A preview tab would be replaced by the next file's diff: several files get a tab each.
  await openCandidateDiff(p, skillName, undefined, others.length === 0);
  for (const f of others) await openCandidateDiff(p, undefined, f.path, false);
}
