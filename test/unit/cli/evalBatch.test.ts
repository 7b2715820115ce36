import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAiBatchApi } from '../../support/loopback/batchApis';
import type { LoopbackServer, RecordedRequest } from '../../support/loopback/core';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import {
  scriptedModels,
  scriptedTargetModel,
  scriptedWireOverrides,
} from '../../support/loopback/scriptedModels';
import { exampleTasks } from '../train/batchHelpers';

const root = join(__dirname, '..', '..', '..');
const example = join(root, 'examples', 'house-style');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI from source; `interruptWhen` sends Ctrl-C (SIGINT) once stdout matches. */
function cli(args: string[], interruptWhen?: RegExp): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts'), ...args], {
    cwd: root,
    env: { ...process.env, NO_COLOR: '1' },
  });
  let stdout = '';
  let stderr = '';
  let sent = false;
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (interruptWhen && !sent && interruptWhen.test(stdout)) {
      sent = true;
      child.kill('SIGINT');
    }
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** `skillopt eval --batch` as a person runs it: Ctrl-C while the batch is out, then the printed command. */
describe('skillopt eval --batch (CLI, loopback batch API)', function () {
  this.timeout(90_000);
  let dir: string;
  let server: LoopbackServer;
  const api = new OpenAiBatchApi({ pollsToEnd: 100 });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-cli-batch-'));
    cpSync(example, dir, { recursive: true });
    server = await startOpenAiServer(scriptedModels(exampleTasks()), { routes: api.routes });
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves the batch running on Ctrl-C, says so, and the printed command collects the same batch', async () => {
    const out = join(dir, 'eval');
    const args = (more: string[]): string[] => [
      'eval',
      join(dir, 'skillopt.yaml'),
      '--skill',
      join(dir, 'SKILL.md'),
      ...more,
      '--cfg-options',
      'cache.enabled=false',
      'model.optimizer_backend=openai_compatible',
      'model.target_backend=openai',
      `model.optimizer_base_url=${server.url}`,
      `model.target_base_url=${server.url}`,
      `model.target=${scriptedTargetModel}`,
      'model.target_supports_batch=true',
      'evaluation.batch_poll_s=0.05',
    ];
    const first = await cli(args(['--out', out, '--batch']), /Submitted eval batch/);
    assert.equal(first.code, 130, first.stdout + first.stderr);
    assert.match(first.stdout, /Submitted eval batch batch_loopback_\d+ \(openai_compatible\)/);
    assert.match(
      first.stdout,
      /Stopped: Stopped waiting for openai_compatible batch (\S+) \(eval evaluation\); the .* is left running at the provider; resuming this folder collects it without paying twice\. Answered items are kept; continue with:\n {2}skillopt eval \S+ --skill \S+ --split test --out \S+ --batch --cfg-options /,
    );
    assert.equal(api.batches.size, 1);
    assert.equal(api.cancelRequests.length, 0);
    assert.equal(existsSync(join(out, 'eval_summary.json')), false);

    const again = await cli(args(['--split', 'test', '--out', out, '--batch']));
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout, /Collecting eval batch batch_loopback_\d+/);
    assert.match(again.stdout, /test: hard \d\.\d{4}, soft \d\.\d{4} over \d+ answered items/);
    assert.equal(api.batches.size, 1, 'the same batch was collected, not a new one sent');
    assert.equal(server.requests.filter((r) => r.path.endsWith('/chat/completions')).length, 0);
    assert.ok(existsSync(join(out, 'eval_summary.json')));
  });
});

/**
 * `skillopt eval --aa` against a target whose answers are noisy whatever the skill (a seeded 30 %
 * error rate per sample): the strict gate's false-accept rate is reported, the paired gate's beside it.
 */
describe('skillopt eval --aa (CLI, loopback OpenAI wire, noisy target)', function () {
  this.timeout(90_000);
  let dir: string;
  let server: LoopbackServer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-cli-aa-'));
    cpSync(example, dir, { recursive: true });
    // Each sample (seed) of each question is wrong 3 times in 10, decided by a hash: noise, not skill.
    const noisy = (req: RecordedRequest): boolean => {
      const seed = (req.body as { seed?: number }).seed ?? 0;
      return createHash('sha256').update(`${seed}:${req.rawBody}`).digest()[0] % 10 < 3;
    };
    server = await startOpenAiServer(
      scriptedModels(exampleTasks(), (req, stage) =>
        stage === 'target' && noisy(req) ? { kind: 'reply', text: '<answer>noise</answer>' } : undefined,
      ),
    );
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports how often the strict and the paired gate would accept the skill over itself', async () => {
    const out = join(dir, 'aa');
    const run = await cli([
      'eval',
      join(dir, 'skillopt.yaml'),
      '--skill',
      join(dir, 'SKILL.md'),
      '--split',
      'selection',
      '--aa',
      '4',
      '--out',
      out,
      '--cfg-options',
      'cache.enabled=false',
      ...scriptedWireOverrides(server.url),
    ]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const m =
      /strict gate \(the reference rule\): would accept the skill over itself in (\d+) of 12 comparisons/.exec(
        run.stdout,
      );
    assert.ok(m, run.stdout);
    assert.ok(Number(m[1]) > 0, 'noise alone gets accepted by the strict gate');
    assert.match(run.stdout, /paired gate \(alpha 0\.05\): 0 accepted \(0%\)/);
    const summary = JSON.parse(readFileSync(join(out, 'eval_summary.json'), 'utf8')) as {
      aa: { runs: number; strict_accepts: number; changed_items: number };
      model_calls: number;
      n_items: number;
    };
    assert.equal(summary.aa.runs, 4);
    assert.equal(summary.aa.strict_accepts, Number(m[1]));
    assert.ok(summary.aa.changed_items > 0);
    assert.equal(summary.model_calls, 4 * summary.n_items, 'each run paid once, with a seed of its own');

    const bad = await cli([
      'eval',
      join(dir, 'skillopt.yaml'),
      '--skill',
      join(dir, 'SKILL.md'),
      '--aa',
      '1',
    ]);
    assert.equal(bad.code, 2);
    assert.match(bad.stdout + bad.stderr, /--aa must be a whole number from 2 to 20 \(got 1\)/);
  });
});
