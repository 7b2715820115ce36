/**
 * Where a line of a trained skill came from, for the editor hover: the run's `provenance.json`
 * (one record per edit a kept step applied) matched against the hovered line. Pure: no `vscode`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { originOfLine, type ProvenanceRecord } from '../../engine/train/provenance';

export { originOfLine };
import type { RunFolder } from '../../engine/store/runReader';
import { RUN_FILE, RunLayout } from '../../engine/store/layout';
import { artifactSchemas, readArtifact } from '../../engine/store/runSchemas';
import { formatDelta, formatScore } from './treeNodes';

/** The hover's lines, as plain text (the edit came from a model: never rendered as Markdown). */
export function describeOrigin(runName: string, r: ProvenanceRecord): string[] {
  const source =
    r.source_type === 'success'
      ? 'successful tasks'
      : r.source_type === 'failure'
        ? 'failed tasks'
        : undefined;
  const ids = r.trajectory_ids.slice(0, 5).join(', ');
  const more = r.trajectory_ids.length > 5 ? ` and ${r.trajectory_ids.length - 5} more` : '';
  return [
    `Added by step ${r.step} (epoch ${r.epoch}) of ${runName}: ${r.op}${source ? ` from ${source}` : ''}${r.support_count !== undefined ? `, support ${r.support_count}` : ''}.`,
    `Selection score ${formatScore(r.score_before)} → ${formatScore(r.score_after)} (${formatDelta(r.score_after - r.score_before)}) when the gate kept it (${r.action.replace(/_/g, ' ')}).`,
    ...(r.trajectory_ids.length
      ? [
          `Evidence: ${r.trajectory_ids.length} trajector${r.trajectory_ids.length === 1 ? 'y' : 'ies'} (${ids}${more}), ${r.minibatches.length} analyst minibatch${r.minibatches.length === 1 ? '' : 'es'}.`,
        ]
      : []),
  ];
}

/** Does this run train (or hold the best version of) the skill at `path`? */
export function runTrains(
  run: RunFolder,
  path: string,
  origin?: { skillPath?: string; configPath: string },
): boolean {
  if (resolve(new RunLayout(run.dir).file(RUN_FILE.bestSkill)) === resolve(path)) return true;
  if (origin?.skillPath && resolve(origin.skillPath) === resolve(path)) return true;
  const init = run.config.skill_init;
  return typeof init === 'string' && isAbsolute(init) && resolve(init) === resolve(path);
}

/** `provenance.json` and the initial skill of a run, re-read only when a file changed. */
export class ProvenanceFiles {
  private readonly cache = new Map<string, { stamp: string; records: ProvenanceRecord[] }>();
  private readonly initial = new Map<string, { mtimeMs: number; lines: Set<string> }>();

  /**
   * Where a line came from in this run, if a kept edit wrote it. A line the person's initial skill
   * already had is theirs, even when an edit restated it (a heading kept by a replace, say).
   */
  originOf(runDir: string, line: string): ProvenanceRecord | undefined {
    if (this.initialLines(runDir).has(line.trim())) return undefined;
    return originOfLine(line, this.records(runDir));
  }

  private initialLines(runDir: string): Set<string> {
    const file = new RunLayout(runDir).skillVersion(0);
    if (!existsSync(file)) return new Set();
    const mtimeMs = statSync(file).mtimeMs;
    const hit = this.initial.get(file);
    if (hit && hit.mtimeMs === mtimeMs) return hit.lines;
    const lines = new Set(
      readFileSync(file, 'utf8')
        .split('\n')
        .map((l) => l.trim()),
    );
    this.initial.set(file, { mtimeMs, lines });
    return lines;
  }

  records(runDir: string): ProvenanceRecord[] {
    const file = new RunLayout(runDir).file(RUN_FILE.provenance);
    if (!existsSync(file)) return [];
    const st = statSync(file);
    // Size as well as time: two writes within one clock tick must not look the same.
    const stamp = `${st.mtimeMs}:${st.size}`;
    const hit = this.cache.get(file);
    if (hit && hit.stamp === stamp) return hit.records;
    let records: ProvenanceRecord[];
    try {
      const saved = readArtifact<ProvenanceRecord[]>(file, artifactSchemas.records) ?? [];
      // The hover is on SKILL.md: a skill folder's edits of its other files are not its lines.
      records = saved.filter((r) => r.file === undefined);
    } catch {
      // Not what the engine writes (edited by hand?): show nothing rather than guess.
      return hit?.records ?? [];
    }
    this.cache.set(file, { stamp, records });
    return records;
  }
}
