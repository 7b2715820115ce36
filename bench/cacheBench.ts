/**
 * §3 of issue 7, second half: what a resumed run and an eval-only run pay again. A run is
 * interrupted at a chosen point (as a crash would: the abort signal fires mid-stage) and resumed
 * in the same folder with the same response cache; every request the server answered before the
 * interruption and is asked again after it is finished work paid twice. Then eval-only on the
 * trained skill, which should be answered from the cache entirely.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EngineEvent } from '../src/protocol/events';
import { evalPrepared, type EvalSplit } from '../src/engine/evalRun';
import { prepareBenchRun, recordTraining, type ChildServer } from './harness';
import type { ServedRequest } from './server';
import { fmt, table } from './stats';

export interface Interruption {
  name: string;
  describe: string;
  when: (e: EngineEvent) => boolean;
}

export const INTERRUPTIONS: Interruption[] = [
  {
    name: 'mid-rollout',
    describe: 'step 3, after 20 of 40 rollouts',
    when: (e) => e.type === 'rollout/progress' && e.step === 3 && e.stage === 'rollout' && e.done >= 20,
  },
  {
    name: 'after-reflect',
    describe: 'step 3, reflection done, before the merge',
    when: (e) => e.type === 'stage/finished' && e.step === 3 && e.stage === 'reflect',
  },
  {
    name: 'mid-gate',
    describe: 'step 3, after 20 of 40 gate evaluations',
    when: (e) => e.type === 'rollout/progress' && e.step === 3 && e.stage === 'evaluate' && e.done >= 20,
  },
  {
    name: 'slow-update-gate',
    describe: 'epoch 2 end, slow-update gate after 10 of 40',
    when: (e) => e.type === 'rollout/progress' && e.stage === 'slow_update' && e.done >= 10,
  },
];

export interface ResumeOutcome {
  name: string;
  describe: string;
  status: string;
  /** Requests the server answered before the interruption. */
  answeredBefore: number;
  /** Requests cut off by the interruption (paid, never delivered). */
  cutOff: number;
  /** Requests the resumed run sent to the server. */
  requestsAfter: number;
  /** Resumed-run calls answered from the response cache. */
  cacheHitsAfter: number;
  /** Replies the engine had received before the interruption and asked for again after it: paid twice. */
  repaid: number;
  repaidByStage: Record<string, number>;
  /**
   * Replies the server had sent but the stopping engine dropped (its calls were in flight when the
   * signal fired), asked for again after the resume.
   */
  droppedAtStop: number;
  /** Interrupted + resumed requests minus an uninterrupted run's. */
  extraVsUninterrupted: number;
  /** Cache hits ÷ (hits + requests) in the resumed run. */
  hitRate: number;
}

export interface EvalOutcome {
  split: string;
  items: number;
  modelCalls: number;
  cacheHits: number;
  hitRate: number;
}

export interface CacheResult {
  uninterruptedRequests: number;
  resumes: ResumeOutcome[];
  evalOnly: EvalOutcome[];
}

/**
 * Requests of the resumed run (`after`, as the server saw them) that were already answered before
 * the interruption, per stage: `repaid` when the engine had received the reply (`received`: hashes
 * of calls that returned to the engine), `dropped` when only the server had sent it.
 */
export function repaidRequests(
  before: ReadonlyArray<Pick<ServedRequest, 'hash' | 'answered'>>,
  received: ReadonlySet<number>,
  after: ReadonlyArray<Pick<ServedRequest, 'hash' | 'stage'>>,
): { repaid: Record<string, number>; dropped: number } {
  const answered = new Set(before.filter((r) => r.answered).map((r) => r.hash));
  const repaid: Record<string, number> = {};
  let dropped = 0;
  for (const r of after) {
    if (received.has(r.hash)) repaid[r.stage] = (repaid[r.stage] ?? 0) + 1;
    else if (answered.has(r.hash)) dropped++;
  }
  return { repaid, dropped };
}

export async function runCache(
  server: ChildServer,
  workDir: string,
  interruptions: readonly Interruption[],
  log: (line: string) => void,
): Promise<CacheResult> {
  await server.reset();
  const uDir = join(workDir, 'cache-uninterrupted');
  const u = await recordTraining({ server, outDir: join(uDir, 'run'), cacheDir: join(uDir, 'cache') });
  if (u.error) throw new Error(`uninterrupted run failed: ${u.error}`);
  const uninterrupted = (await server.log()).length;

  const resumes: ResumeOutcome[] = [];
  for (const cut of interruptions) {
    const dir = join(workDir, `cache-${cut.name}`);
    const common = { server, outDir: join(dir, 'run'), cacheDir: join(dir, 'cache') };
    await server.reset();
    const first = await recordTraining({ ...common, abortWhen: cut.when });
    // Let cut-off requests finish at the server so the log says what was delivered.
    await new Promise((r) => setTimeout(r, 50 + server.settings.latencyMs + server.settings.jitterMs));
    const before = await server.log();
    await server.reset();
    const second = await recordTraining(common);
    const after = await server.log();
    const hits = second.calls.filter((c) => c.cached).length;
    const received = new Set(
      first.calls.filter((c) => !c.cached && c.hash !== undefined).map((c) => c.hash!),
    );
    const { repaid: byStage, dropped } = repaidRequests(before, received, after);
    const repaid = Object.values(byStage).reduce((a, b) => a + b, 0);
    const o: ResumeOutcome = {
      name: cut.name,
      describe: cut.describe,
      status: `${first.outcome?.status ?? first.error ?? '?'} → ${second.outcome?.status ?? second.error ?? '?'}`,
      answeredBefore: before.filter((r) => r.answered).length,
      cutOff: before.filter((r) => !r.answered).length,
      requestsAfter: after.length,
      cacheHitsAfter: hits,
      repaid,
      repaidByStage: byStage,
      droppedAtStop: dropped,
      extraVsUninterrupted: before.length + after.length - uninterrupted,
      hitRate: hits / Math.max(1, hits + after.length),
    };
    resumes.push(o);
    log(
      `  resume after ${cut.name}: ${o.requestsAfter} requests, ${o.cacheHitsAfter} cache hits, ${o.repaid} received replies paid again, ${o.droppedAtStop} dropped at the stop (${o.status})`,
    );
  }

  const evalOnly: EvalOutcome[] = [];
  const best = readFileSync(join(uDir, 'run', 'best_skill.md'), 'utf8');
  for (const split of ['test', 'val'] as EvalSplit[]) {
    const prepared = prepareBenchRun({
      server,
      outDir: join(uDir, `eval-${split}`),
      cacheDir: join(uDir, 'cache'),
    });
    const r = await evalPrepared(prepared, {
      skill: best,
      skillPath: join(uDir, 'run', 'best_skill.md'),
      split,
      emit: () => undefined,
      signal: new AbortController().signal,
    });
    const o: EvalOutcome = {
      split: r.split,
      items: r.n_items,
      modelCalls: r.model_calls,
      cacheHits: r.cache_hits,
      hitRate: r.cache_hits / Math.max(1, r.cache_hits + r.model_calls),
    };
    evalOnly.push(o);
    log(
      `  eval-only ${o.split} after training: ${o.cacheHits}/${o.items} from the cache, ${o.modelCalls} model calls`,
    );
  }
  return { uninterruptedRequests: uninterrupted, resumes, evalOnly };
}

/** The bench report's cache table. */
export function cacheSection(c: CacheResult): string[] {
  const out: string[] = [];
  out.push(`Resumed runs (an uninterrupted run sends ${c.uninterruptedRequests} requests):`);
  out.push(
    table(
      [
        'interrupted',
        'answered before',
        'cut off',
        'requests after',
        'cache hits after',
        'hit rate',
        'received, paid again',
        'dropped at stop',
        'extra vs uninterrupted',
      ],
      c.resumes.map((r) => [
        `${r.name} (${r.describe})`,
        String(r.answeredBefore),
        String(r.cutOff),
        String(r.requestsAfter),
        String(r.cacheHitsAfter),
        `${fmt(r.hitRate * 100, 1)}%`,
        String(r.repaid),
        String(r.droppedAtStop),
        String(r.extraVsUninterrupted),
      ]),
    ),
  );
  out.push('', 'Eval-only on the trained skill, same cache:');
  out.push(
    table(
      ['split', 'items', 'cache hits', 'model calls', 'hit rate'],
      c.evalOnly.map((e) => [
        e.split,
        String(e.items),
        String(e.cacheHits),
        String(e.modelCalls),
        `${fmt(e.hitRate * 100, 1)}%`,
      ]),
    ),
  );
  return out;
}
