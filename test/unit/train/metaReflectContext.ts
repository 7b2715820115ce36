/** A run context over a prepared run whose optimizer requests are recorded and whose replies may be forced (meta and deep reflection tests). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatRequest, ChatResult, ModelClient } from '../../../src/engine/llm/types';
import { silentLogger } from '../../../src/engine/log';
import type { PreparedRun } from '../../../src/engine/run';
import { STEP_FILE } from '../../../src/engine/store/layout';
import type { RunContext } from '../../../src/engine/train/context';
import type { MetaReflectFile } from '../../../src/engine/train/metaReflect';

export interface Recorder {
  requests: ChatRequest[];
  fallbacks: Array<{ stage: string; reason: string }>;
}

/** Counts every optimizer request; `reply` can replace the model's text for a request (n counts from 1). */
function wrap(
  inner: ModelClient,
  rec: Recorder,
  reply?: (req: ChatRequest, n: number) => string | undefined,
): ModelClient {
  return {
    role: inner.role,
    backend: inner.backend,
    model: inner.model,
    chat: async (req, signal): Promise<ChatResult> => {
      rec.requests.push(req);
      const forced = reply?.(req, rec.requests.length);
      if (forced === undefined) return inner.chat(req, signal);
      return {
        text: forced,
        usage: { promptTokens: 1, completionTokens: 1 },
        backend: inner.backend,
        model: inner.model,
        seconds: 0,
        attempts: 1,
        cached: false,
      };
    },
  };
}

export function contextFor(
  prepared: PreparedRun,
  outDir: string,
  reply?: (req: ChatRequest, n: number) => string | undefined,
  settings: Partial<RunContext['settings']> = {},
): { ctx: RunContext; rec: Recorder } {
  const rec: Recorder = { requests: [], fallbacks: [] };
  const ctx: RunContext = {
    settings: { ...prepared.settings, ...settings },
    optimizer: wrap(prepared.models.optimizer, rec, reply),
    target: prepared.models.target,
    scorer: prepared.scorer,
    outDir,
    signal: new AbortController().signal,
    logger: silentLogger,
    emit: () => undefined,
    recordFallback: (stage, reason) => rec.fallbacks.push({ stage, reason }),
  };
  return { ctx, rec };
}

export function readResult(dir: string): MetaReflectFile {
  return JSON.parse(readFileSync(join(dir, STEP_FILE.metaReflectResult), 'utf8')) as MetaReflectFile;
}
