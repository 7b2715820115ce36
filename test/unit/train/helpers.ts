import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineEvent } from '../../../src/engine/events';
import type { ChatRequest } from '../../../src/engine/llm/types';
import { prepareRun, trainPrepared, type PreparedRun } from '../../../src/engine/run';
import type { TrainOutcome } from '../../../src/engine/train/trainer';
import type { StepRecord } from '../../../src/engine/train/types';

export const exampleConfig = join(__dirname, '..', '..', '..', 'examples', 'house-style', 'skillopt.yaml');

export function tempDir(prefix: string): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

/** The bundled example with the sim backend; caching off so every run does its own work. */
export function prepareSim(
  outDir: string,
  overrides: string[] = [],
  configPath = exampleConfig,
): PreparedRun {
  return prepareRun({ configPath, outDir, overrides: ['cache.enabled=false', ...overrides] });
}

export interface RunResult {
  outcome: TrainOutcome;
  events: EngineEvent[];
}

/** Train until done, or abort when `abortWhen` first returns true (a crash at that point). */
export async function runSim(
  prepared: PreparedRun,
  abortWhen?: (e: EngineEvent, all: EngineEvent[]) => boolean,
): Promise<RunResult> {
  const events: EngineEvent[] = [];
  const controller = new AbortController();
  const outcome = await trainPrepared(prepared, {
    emit: (e) => {
      events.push(e);
      if (abortWhen && !controller.signal.aborted && abortWhen(e, events)) controller.abort();
    },
    signal: controller.signal,
    resumeCommand: 'resume',
  });
  return { outcome, events };
}

/** History without what legitimately differs between a resumed and an uninterrupted run. */
export function comparableHistory(outDir: string): Array<Partial<StepRecord>> {
  const history = JSON.parse(readFileSync(join(outDir, 'history.json'), 'utf8')) as StepRecord[];
  return history.map((r) => {
    const { timing: _t, tokens: _k, wall_time_s: _w, fallbacks: _f, ...rest } = r;
    return rest;
  });
}

export function read(outDir: string, ...parts: string[]): string {
  return readFileSync(join(outDir, ...parts), 'utf8');
}

export function readJson<T>(outDir: string, ...parts: string[]): T {
  return JSON.parse(read(outDir, ...parts)) as T;
}

/** Wrap the optimizer client so a test can inspect every request it made (in order). */
export function recordRequests(prepared: PreparedRun): ChatRequest[] {
  const seen: ChatRequest[] = [];
  const inner = prepared.models.optimizer;
  prepared.models.optimizer = {
    role: inner.role,
    backend: inner.backend,
    model: inner.model,
    chat: (req, signal) => {
      seen.push(req);
      return inner.chat(req, signal);
    },
  };
  return seen;
}
