/** A meta-reflect run context over a prepared run, whose optimizer replies may be forced. */
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

export function contextFor(
  prepared: PreparedRun,
  outDir: string,
  reply?: (req: ChatRequest) => string | undefined,
): { ctx: RunContext; rec: Recorder } {
  const rec: Recorder = { requests: [], fallbacks: [] };
  const inner = prepared.models.optimizer;
  const optimizer: ModelClient = {
    role: inner.role,
    backend: inner.backend,
    model: inner.model,
    chat: async (req, signal): Promise<ChatResult> => {
      rec.requests.push(req);
      const forced = reply?.(req);
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
  const ctx: RunContext = {
    settings: prepared.settings,
    optimizer,
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
