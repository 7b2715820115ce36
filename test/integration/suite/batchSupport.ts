/**
 * A suite that trains or evaluates the house-style example against the loopback OpenAI Batch API
 * (the real `openai` SDK in the engine process): window stubs, the batch API, a folder of its own
 * and the server, all put back or removed after it.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskItem } from '../../../src/engine/data/tasks';
import { prepareRun } from '../../../src/engine/run';
import { OpenAiBatchApi } from '../../support/loopback/batchApis';
import { startOpenAiServer, type LoopbackServer } from '../../support/loopback/openaiServer';
import { scriptedModels } from '../../support/loopback/scriptedModels';
import { closeEditors, stubWindow, workspacePath } from './support';

/** Every task of the config's splits (the test split unsealed), for the scripted target's answers. */
export function tasksOf(configPath: string): TaskItem[] {
  const out = mkdtempSync(join(tmpdir(), 'skillopt-it-tasks-'));
  try {
    const p = prepareRun({ configPath, outDir: out, dryRun: true, overrides: ['cache.enabled=false'] });
    return [...p.splits.train, ...p.splits.val, ...p.splits.test.unsealForEvaluation()];
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Call inside `describe`. A batch ends after `pollsToEnd` status checks. */
export function batchSuite(folder: string, pollsToEnd: number) {
  const stubs = stubWindow();
  const batches = new OpenAiBatchApi({ pollsToEnd });
  let server: LoopbackServer | undefined;
  const dir = (): string => workspacePath(folder);
  afterEach(async () => {
    stubs.restore();
    await closeEditors();
  });
  after(async () => {
    await server?.close();
    rmSync(dir(), { recursive: true, force: true });
  });
  return {
    stubs,
    batches,
    dir,
    /** Copies the example into the suite's folder and starts the server playing its tasks (once per suite). */
    async start(): Promise<LoopbackServer> {
      if (server) return server;
      mkdirSync(dir(), { recursive: true });
      for (const f of ['SKILL.md', 'tasks.jsonl', 'skillopt.yaml'])
        cpSync(workspacePath('house-style', f), join(dir(), f));
      server = await startOpenAiServer(scriptedModels(tasksOf(join(dir(), 'skillopt.yaml'))), {
        routes: batches.routes,
      });
      return server;
    },
  };
}
