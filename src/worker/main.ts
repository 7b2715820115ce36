/**
 * The engine process. The extension host forks this file and talks to it over Node's IPC
 * channel with the typed protocol in src/protocol/engine.ts; stdout and stderr stay free for
 * crash output. The training loop runs here, never in the extension host.
 */
import { gatePower } from '../engine/train/gateSettings';
import { noSkillOff } from '../engine/train/finalize';
import { readSkillToScore } from '../engine/skill/package/artifacts';
import { readSkillText } from '../engine/skill/skillFile';
import { SkillOptError } from '../engine/errors';
import type { EngineEvent } from '../protocol/events';
import { levelAtLeast, type Logger } from '../engine/log';
import { VERSION, type LogLevel } from '../protocol/vocabulary';
import { dollarCapNotice } from '../engine/dollarCap';
import { describeCostLines, estimateCost } from '../engine/costEstimate';
import { evalPrepared } from '../engine/evalRun';
import { prepareRun, trainPrepared, type PreparedRun } from '../engine/run';
import { resolve } from 'node:path';
import { batchTargetOnly, cancelPreparedBatches, withBatchApi } from '../engine/cancelBatches';
import type { CancelledBatch } from '../engine/llm/batch/cancel';
import { RUN_DIR } from '../engine/store/layout';
import {
  EngineNotifications,
  EngineRequests,
  protocolVersion,
  type CancelledBatchInfo,
  type DecideApplied,
  type DecideParams,
  type RunSource,
} from '../protocol/engine';
import type { Overrule, ReviewDecision, Reviewer, ReviewRequest } from '../engine/train/review';
import { cancelledError } from '../engine/errors';
import { RpcConnection, RpcError, type Transport, type WireMessage } from '../protocol/rpc';
import { llmError, type LmBridge } from '../engine/llm/vscodeLm';

function ipcTransport(): Transport {
  const send = process.send?.bind(process);
  if (!send) throw new Error('the SkillOpt engine must be started by the extension (no IPC channel)');
  return {
    send: (m) => {
      send(m);
    },
    onMessage: (l) => process.on('message', (m) => l(m as WireMessage)),
    onClose: (l) => process.on('disconnect', () => l('host disconnected')),
  };
}

interface ActiveRun {
  controller: AbortController;
  done: Promise<unknown>;
  reviewer: QueueReviewer;
}

/**
 * Reviews wait here until the host sends `review/decide` naming their question; overrules queue for
 * the next step.
 */
export class QueueReviewer implements Reviewer {
  private readonly pending = new Map<string, { step: number; answer: (d: ReviewDecision) => void }>();
  private overrules: Overrule[] = [];

  review(request: ReviewRequest, signal: AbortSignal): Promise<ReviewDecision> {
    return new Promise((resolve, reject) => {
      this.pending.set(request.questionId, { step: request.step, answer: resolve });
      signal.addEventListener('abort', () => {
        this.pending.delete(request.questionId);
        reject(cancelledError('Waiting for review'));
      });
    });
  }

  decide(p: DecideParams): DecideApplied {
    const decision: ReviewDecision = {
      edits: p.decisions,
      ...(p.candidate ? { candidate: p.candidate } : {}),
      ...(p.reason ? { reason: p.reason } : {}),
    };
    // An answer is to one question: keyed by step alone, one drawn for an earlier question of the
    // same step (a previous run in this folder, a re-ask) would answer the new one unseen.
    if (p.questionId !== undefined) {
      const waiting = this.pending.get(p.questionId);
      if (!waiting || waiting.step !== p.step) return 'stale';
      this.pending.delete(p.questionId);
      waiting.answer(decision);
      return 'pending-review';
    }
    if ([...this.pending.values()].some((w) => w.step === p.step)) return 'stale';
    if (!p.candidate) return 'ignored';
    this.overrules.push({
      step: p.step,
      decision: p.candidate === 'accept' ? 'accept' : 'revert',
      ...(p.reason ? { reason: p.reason } : {}),
    });
    return 'overrule';
  }

  takeOverrules(): Overrule[] {
    const out = this.overrules;
    this.overrules = [];
    return out;
  }
}

export function serve(transport: Transport): RpcConnection {
  const conn = new RpcConnection(transport, 60_000);
  let trusted = false;
  let minLevel: LogLevel = 'info';
  const runs = new Map<string, ActiveRun>();
  const logger: Logger = {
    log(level, component, message) {
      if (levelAtLeast(level, minLevel)) conn.notify(EngineNotifications.log, { level, component, message });
    },
  };
  const lmBridge: LmBridge = {
    request: async (params, signal) => {
      try {
        return await conn.sendRequest(EngineRequests.lmRequest, params, { timeoutMs: 0, signal });
      } catch (err) {
        if (err instanceof RpcError && err.reason !== 'cancelled') {
          throw llmError(
            err.message,
            err.reason === 'llm-transient',
            'see the SkillOpt log for the language model error',
          );
        }
        throw err;
      }
    },
  };
  const prepare = (src: RunSource, extra: { outDir?: string; dryRun?: boolean } = {}): PreparedRun =>
    prepareRun({
      configPath: src.configPath,
      ...(src.overrides ? { overrides: src.overrides } : {}),
      ...(extra.outDir ? { outDir: extra.outDir } : {}),
      ...(extra.dryRun ? { dryRun: true } : {}),
      logger,
      models: { ...(src.keys ? { keys: src.keys } : {}), lmBridge, trustedWorkspace: trusted },
    });

  conn.onRequest(EngineRequests.initialize, (p) => {
    if (p.protocolVersion !== protocolVersion) {
      throw new SkillOptError(
        'internal',
        `protocol mismatch: host speaks ${p.protocolVersion}, engine ${protocolVersion}`,
        {
          fix: 'reload the window so the extension and its engine come from the same version',
        },
      );
    }
    trusted = p.trusted;
    minLevel = p.logLevel;
    return { protocolVersion, engineVersion: VERSION, pid: process.pid };
  });

  conn.onRequest(EngineRequests.validate, async (src) => {
    const prepared = prepare(src, { dryRun: true });
    await prepared.models.close();
    // The start dialog is for training: its dollar cap is refused or explained before Start.
    const capNotice = dollarCapNotice(prepared, 'train');
    return {
      configPath: prepared.loaded.files[0] ?? src.configPath,
      skillPath: prepared.skillPath,
      splits: {
        train: prepared.splits.train.length,
        val: prepared.splits.val.length,
        test: prepared.splits.test.size,
      },
      totalSteps: prepared.totalSteps,
      estimatedCalls: prepared.estimate.total,
      ...(() => {
        const cost = estimateCost(prepared);
        return {
          estimatedDollars:
            cost.low !== null && cost.high !== null ? { low: cost.low, high: cost.high } : null,
          // The prompt-cache assumption goes on a line of its own under the range.
          estimatedCost: describeCostLines(cost).join('\n'),
        };
      })(),
      optimizer: prepared.models.describe.optimizer,
      target: prepared.models.describe.target,
      simulated: prepared.models.simulated,
      warnings: capNotice ? [...prepared.warnings, capNotice] : prepared.warnings,
      gatePower: gatePower(prepared.settings, prepared.splits.val.length),
      ...(prepared.estimate.once.no_skill !== undefined
        ? { noSkillCalls: prepared.estimate.once.no_skill }
        : noSkillOff(prepared.settings)
          ? { noSkillOff: true as const }
          : {}),
    };
  });

  conn.onRequest(EngineRequests.startRun, (p) => {
    const prepared = prepare(
      { ...p, overrides: [...(p.overrides ?? []), ...(p.reviewMode ? [`review.mode=${p.reviewMode}`] : [])] },
      p.outDir ? { outDir: p.outDir } : {},
    );
    const reviewer = new QueueReviewer();
    const runId = prepared.outDir;
    if (runs.has(runId)) throw new SkillOptError('internal', `a run is already active in ${runId}`);
    let seq = 0;
    const controller = new AbortController();
    const emit = (event: EngineEvent): void =>
      conn.notify(EngineNotifications.runEvent, { runId, seq: seq++, event });
    const done = trainPrepared(prepared, {
      emit,
      signal: controller.signal,
      logger,
      resumeCommand: `SkillOpt: Resume Run (${runId})`,
      cancelBatchCommand: 'Stop Run, then Cancel Provider Batch on the run in the Runs view',
      reviewer,
      ...(p.resume ? { requireResume: true } : {}),
    })
      .catch((err: unknown) => {
        logger.log('error', 'run', err instanceof Error ? (err.stack ?? err.message) : String(err));
      })
      .finally(() => {
        runs.delete(runId);
        void prepared.models.close();
      });
    runs.set(runId, { controller, done, reviewer });
    return { runId, outDir: prepared.outDir };
  });

  conn.onRequest(EngineRequests.stopRun, async (p) => {
    const run = runs.get(p.runId);
    if (!run) return { stopped: false };
    run.controller.abort();
    await run.done;
    return { stopped: true };
  });

  // As `skillopt train --cancel-batch`: the run's own evaluations, not its eval_only/ ones.
  conn.onRequest(EngineRequests.cancelBatches, async (p, signal) => {
    if (runs.has(resolve(p.outDir)))
      throw new SkillOptError('io', 'this run is still training, and its batches with it', {
        file: p.outDir,
        fix: 'stop the run first (Stop Run), then cancel its provider batch',
      });
    const prepared = batchTargetOnly(
      () => prepare({ ...p, overrides: withBatchApi(p.overrides) }, { outDir: p.outDir }),
      (problem) =>
        new SkillOptError('config', `${problem}, so no batch of this target can be running`, {
          key: 'evaluation.batch_api',
          fix: "a batch sent with another target is cancelled with that target's config",
        }),
    );
    try {
      const found = await cancelPreparedBatches(prepared, signal, RUN_DIR.evalOnly);
      return { outDir: prepared.outDir, batches: found.map(batchInfo) };
    } finally {
      await prepared.models.close();
    }
  });

  conn.onRequest(EngineRequests.decide, (p) => {
    const run = runs.get(p.runId);
    if (!run) return { ok: false, applied: 'ignored' as const };
    return { ok: true, applied: run.reviewer.decide(p) };
  });

  conn.onRequest(EngineRequests.evaluate, async (p, signal) => {
    const prepared = prepare(p, p.outDir ? { outDir: p.outDir } : {});
    try {
      // A skill folder run's best_skill.md is scored with its folder (the whole skill). The file is
      // held to env.skill_init's checks: a binary, non-UTF-8 or over-large file is refused before any call.
      const maxBytes = prepared.config.env.max_skill_bytes;
      const skill = readSkillToScore(p.skillPath, (f) => readSkillText(f, maxBytes, 'the Evaluate command'));
      const seqRun = `eval:${p.skillPath}`;
      let seq = 0;
      return await evalPrepared(prepared, {
        skill,
        skillPath: p.skillPath,
        split: p.split,
        ...(p.aa !== undefined ? { aa: p.aa } : {}),
        emit: (event) => conn.notify(EngineNotifications.runEvent, { runId: seqRun, seq: seq++, event }),
        signal,
        logger,
      });
    } finally {
      await prepared.models.close();
    }
  });

  conn.onRequest(EngineRequests.shutdown, async () => {
    for (const r of runs.values()) r.controller.abort();
    await Promise.all([...runs.values()].map((r) => r.done));
    setImmediate(() => process.exit(0));
    return { ok: true as const };
  });

  return conn;
}

/** The engine's record of a cancelled batch as the protocol carries it. */
function batchInfo(b: CancelledBatch): CancelledBatchInfo {
  const s = b.status;
  return {
    outcome: b.outcome,
    provider: b.provider,
    stage: b.stage,
    file: b.file,
    ...(b.batchId ? { batchId: b.batchId } : {}),
    ...(s ? { status: { detail: s.detail, total: s.total, done: s.done, failed: s.failed } } : {}),
  };
}

if (require.main === module) {
  const conn = serve(ipcTransport());
  process.on('uncaughtException', (err) => {
    conn.notify(EngineNotifications.log, {
      level: 'error',
      component: 'engine',
      message: err.stack ?? err.message,
    });
  });
  process.on('disconnect', () => process.exit(0));
}
