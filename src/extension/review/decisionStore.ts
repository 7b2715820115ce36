/**
 * The person's review decisions, remembered per run in workspace state so the Gate History can
 * mark human decisions for runs whose engine has finished (or never heard of them). No `vscode`
 * import: the store takes anything shaped like a Memento.
 */
import type { DecideParams } from '../../protocol/engine';
import type { CandidateOrigin } from '../../protocol/webview';
import type { CandidateDecision } from '../../protocol/vocabulary';

export interface MementoLike {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

export interface StepDecision {
  candidate?: CandidateDecision;
  edits: Record<string, { accept: boolean; reason?: string }>;
}

/** Keyed by `<origin>:<step>`. */
export type RunDecisions = Record<string, StepDecision>;

const storageKey = 'skillopt.review.decisions';
/** Old runs drop out first; a person reviews far fewer runs than this. */
const maxRuns = 200;

export function stepKey(step: number, origin: CandidateOrigin): string {
  return `${origin}:${step}`;
}

const stores = new WeakMap<MementoLike, DecisionStore>();

export class DecisionStore {
  private readonly listeners: Array<(runKey: string) => void> = [];

  constructor(private readonly memento: MementoLike) {}

  /** One store per memento, so every view hears about every decision. */
  static of(memento: MementoLike): DecisionStore {
    let store = stores.get(memento);
    if (!store) {
      store = new DecisionStore(memento);
      stores.set(memento, store);
    }
    return store;
  }

  private all(): Record<string, RunDecisions> {
    return this.memento.get<Record<string, RunDecisions>>(storageKey) ?? {};
  }

  forRun(runKey: string): RunDecisions {
    return this.all()[runKey] ?? {};
  }

  onDidChange(listener: (runKey: string) => void): { dispose(): void } {
    this.listeners.push(listener);
    return { dispose: () => void this.listeners.splice(this.listeners.indexOf(listener), 1) };
  }

  /** What is remembered of one step, to put back with `restore`. */
  stepOf(runKey: string, origin: CandidateOrigin, step: number): StepDecision | undefined {
    return this.forRun(runKey)[stepKey(step, origin)];
  }

  /**
   * Puts a step back as it was before a decision the run refused (it answered a question no longer
   * asked): the Gate History must not show as the person's a decision that changed nothing.
   */
  async restore(
    runKey: string,
    origin: CandidateOrigin,
    step: number,
    prior: StepDecision | undefined,
  ): Promise<void> {
    const all = this.all();
    const run = { ...(all[runKey] ?? {}) };
    const key = stepKey(step, origin);
    if (prior) run[key] = prior;
    else delete run[key];
    all[runKey] = run;
    await this.memento.update(storageKey, all);
    for (const l of [...this.listeners]) l(runKey);
  }

  async record(runKey: string, origin: CandidateOrigin, params: DecideParams): Promise<void> {
    const all = this.all();
    const run = { ...(all[runKey] ?? {}) };
    const key = stepKey(params.step, origin);
    const prior = run[key] ?? { edits: {} };
    const edits = { ...prior.edits };
    for (const d of params.decisions)
      edits[d.editId] = { accept: d.accept, ...(d.reason ? { reason: d.reason } : {}) };
    const candidate = params.candidate ?? prior.candidate;
    run[key] = { edits, ...(candidate ? { candidate } : {}) };
    delete all[runKey];
    all[runKey] = run;
    const keys = Object.keys(all);
    for (const k of keys.slice(0, Math.max(0, keys.length - maxRuns))) delete all[k];
    await this.memento.update(storageKey, all);
    for (const l of [...this.listeners]) l(runKey);
  }
}
