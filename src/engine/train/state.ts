import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic, writeJsonAtomic } from '../store/atomic';
import type { RuntimeState, StepRecord } from '../../protocol/records';

export function stepDirName(step: number): string {
  return `step_${String(step).padStart(4, '0')}`;
}

export function skillVersionPath(outDir: string, step: number): string {
  return join(outDir, 'skills', `skill_v${String(step).padStart(4, '0')}.md`);
}

export function epochDirName(epoch: number): string {
  return `epoch_${String(epoch).padStart(2, '0')}`;
}

export function readJsonIfExists<T>(path: string): T | undefined {
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

/**
 * What a run folder holds between steps. `runtime_state.json` is written last in every commit, so
 * it is the commit point: anything in `history.json` after `last_completed_step` belongs to an
 * interrupted step and is dropped on resume.
 */
export class RunFiles {
  constructor(readonly outDir: string) {}

  path(...parts: string[]): string {
    return join(this.outDir, ...parts);
  }

  readState(): RuntimeState | undefined {
    return readJsonIfExists<RuntimeState>(this.path('runtime_state.json'));
  }

  readHistory(): StepRecord[] {
    return readJsonIfExists<StepRecord[]>(this.path('history.json')) ?? [];
  }

  writeSkill(step: number, text: string): void {
    writeFileAtomic(skillVersionPath(this.outDir, step), text);
  }

  writeBest(text: string): void {
    writeFileAtomic(this.path('best_skill.md'), text);
  }

  /** One step's commit: artifacts first, then history, then the state that points at them. */
  commitStep(
    record: StepRecord,
    history: StepRecord[],
    state: RuntimeState,
    currentSkill: string,
    bestSkill: string,
  ): void {
    const dir = this.path('steps', stepDirName(record.step));
    writeJsonAtomic(join(dir, 'step_record.json'), record);
    this.writeSkill(record.step, currentSkill);
    this.writeBest(bestSkill);
    writeJsonAtomic(this.path('history.json'), history);
    writeJsonAtomic(this.path('runtime_state.json'), state);
  }

  writeState(state: RuntimeState): void {
    writeJsonAtomic(this.path('runtime_state.json'), state);
  }
}
