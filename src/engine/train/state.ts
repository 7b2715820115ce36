import { readSkillArtifact, readSkillArtifactIfAny, writeSkillArtifact } from '../skill/package/artifacts';
import type { RuntimeState, StepRecord } from '../../protocol/records';
import { writeJsonAtomic } from '../store/atomic';
import { RUN_FILE, RunLayout, STEP_FILE } from '../store/layout';
import { readHistory, readRuntimeState } from '../store/runSchemas';

/**
 * What a run folder holds between steps. `runtime_state.json` is written last in every commit, so
 * it is the commit point: anything in `history.json` after `last_completed_step` belongs to an
 * interrupted step and is dropped on resume.
 */
export class RunFiles {
  readonly layout: RunLayout;

  constructor(readonly outDir: string) {
    this.layout = new RunLayout(outDir);
  }

  readState(): RuntimeState | undefined {
    return readRuntimeState(this.layout.file(RUN_FILE.state));
  }

  readHistory(): StepRecord[] {
    return readHistory(this.layout.file(RUN_FILE.history));
  }

  readSkill(step: number): string {
    return readSkillArtifact(this.layout.skillVersion(step));
  }

  /** The skill of `step`, or undefined when the run never wrote it. */
  readSkillIfAny(step: number): string | undefined {
    return readSkillArtifactIfAny(this.layout.skillVersion(step));
  }

  readBest(): string {
    return readSkillArtifact(this.layout.file(RUN_FILE.bestSkill));
  }

  writeSkill(step: number, text: string): void {
    writeSkillArtifact(this.layout.skillVersion(step), text);
  }

  writeBest(text: string): void {
    writeSkillArtifact(this.layout.file(RUN_FILE.bestSkill), text);
  }

  /** One step's commit: artifacts first, then history, then the state that points at them. */
  commitStep(
    record: StepRecord,
    history: StepRecord[],
    state: RuntimeState,
    currentSkill: string,
    bestSkill: string,
  ): void {
    writeJsonAtomic(this.layout.stepFile(record.step, STEP_FILE.record), record);
    this.writeSkill(record.step, currentSkill);
    this.writeBest(bestSkill);
    writeJsonAtomic(this.layout.file(RUN_FILE.history), history);
    this.writeState(state);
  }

  writeState(state: RuntimeState): void {
    writeJsonAtomic(this.layout.file(RUN_FILE.state), state);
  }
}
