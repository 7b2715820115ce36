import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { evalPrepared, type EvalSummary } from '../../../src/engine/evalRun';
import type { PreparedRun } from '../../../src/engine/run';
import type { RolloutResult } from '../../../src/protocol/records';
import type { LoopbackServer } from '../../support/loopback/core';
import { tempDir } from './helpers';

/** Eval-only of a prepared run's train split with its initial skill (written under `<run>/eval_train`). */
export function evaluateTrain(prepared: PreparedRun): Promise<EvalSummary> {
  return evalPrepared(prepared, {
    skill: prepared.initialSkill,
    skillPath: prepared.skillPath,
    split: 'train',
    emit: () => undefined,
    signal: new AbortController().signal,
  });
}

/** The result rows of such an evaluation. */
export function trainRows(summary: EvalSummary): RolloutResult[] {
  return readFileSync(join(summary.out_dir, 'eval_train', 'results.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as RolloutResult);
}

/** Every item's conversation.json of such an evaluation. */
export function trainConversations(summary: EvalSummary): unknown[][] {
  const dir = join(summary.out_dir, 'eval_train', 'predictions');
  return readdirSync(dir).map(
    (id) => JSON.parse(readFileSync(join(dir, id, 'conversation.json'), 'utf8')) as unknown[],
  );
}

/** Temp folders and loopback servers of a suite, all removed by `close()` (call it in `after`). */
export class Scratch {
  private readonly dirs: Array<ReturnType<typeof tempDir>> = [];
  private readonly servers: LoopbackServer[] = [];

  dir(prefix: string): string {
    const d = tempDir(prefix);
    this.dirs.push(d);
    return d.path;
  }

  track(server: LoopbackServer): void {
    this.servers.push(server);
  }

  async close(): Promise<void> {
    for (const s of this.servers.splice(0)) await s.close();
    for (const d of this.dirs.splice(0)) d.cleanup();
  }
}
