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

  const argsFor = (more: string[], srv: LoopbackServer, extra: string[] = []): string[] => [
    'eval',
    join(dir, 'skillopt.yaml'),
    '--skill',
    join(dir, 'SKILL.md'),
    ...more,
    '--cfg-options',
    'cache.enabled=false',
    'model.optimizer_backend=openai_compatible',
    'model.target_backend=openai',
    `model.optimizer_base_url=${srv.url}`,
    `model.target_base_url=${srv.url}`,
    `model.target=${scriptedTargetModel}`,
    'model.target_supports_batch=true',
    'evaluation.batch_poll_s=0.05',
    ...extra,
  ];
  const args = (more: string[]): string[] => argsFor(more, server);

  it('leaves the batch running on Ctrl-C, says so, and the printed command collects the same batch', async () => {
    const out = join(dir, 'eval');
    const first = await cli(args(['--out', out, '--batch']), /Submitted eval batch/);
    assert.equal(first.code, 130, first.stdout + first.stderr);
    assert.match(first.stdout, /Submitted eval batch batch_loopback_\d+ \(openai_compatible\)/);
    assert.match(
      first.stdout,
      /Stopped: Stopped waiting for openai_compatible batch (\S+) \(eval evaluation\); the .* is left running at the provider; resuming this folder collects it without paying twice\. Answered items are kept; continue with:\n {2}cd \S+ && (?:npx skillopt|skillopt|npm run skillopt --) eval \S+ --skill \S+ --split test --out \S+ --batch --cfg-options /,
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

  it('--cancel-batch cancels the batch a stopped evaluation left running; the next run collects what it answered', async () => {
    // A batch that answers a fifth of its items per status check, checked every 2 s: the Ctrl-C
    // right after the first check lands while it is part done.
    const api = new OpenAiBatchApi({ pollsToEnd: 4 });
    const server = await startOpenAiServer(scriptedModels(exampleTasks()), { routes: api.routes });
    const args = (more: string[]): string[] => argsFor(more, server, ['evaluation.batch_poll_s=2']);
    try {
      const out = join(dir, 'eval-cancel');
      const none = await cli(args(['--out', out, '--cancel-batch']));
      assert.equal(none.code, 0, none.stdout + none.stderr);
      assert.match(none.stdout, /No provider batch is recorded under \S+: nothing to cancel\./);

      // Ctrl-C once the batch has answered some of its items.
      const first = await cli(args(['--out', out, '--batch']), /Submitted eval batch/);
      assert.equal(first.code, 130, first.stdout + first.stderr);
      const id = /Submitted eval batch (batch_loopback_\d+)/.exec(first.stdout)![1];
      const sentAlone = (): number =>
        server.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

      const cancel = await cli(args(['--out', out, '--cancel-batch']));
      assert.equal(cancel.code, 0, cancel.stdout + cancel.stderr);
      assert.deepEqual(api.cancelRequests, [id]);
      const m = new RegExp(
        `Cancelled the openai_compatible batch ${id} of the eval evaluation \\(eval_test/provider_batch\\.json\\): (\\d+) of (\\d+) answered so far, provider status cancelled\\.`,
      ).exec(cancel.stdout);
      assert.ok(m, cancel.stdout);
      const [answered, total] = [Number(m[1]), Number(m[2])];
      assert.ok(answered > 0 && answered < total, `${answered} of ${total} answered before the cancel`);
      // The command that collects them is the evaluation's own, with --batch and without the cancel.
      assert.match(
        cancel.stdout,
        /ask the rest one by one at list price:\n {2}cd \S+ && (?:npx skillopt|skillopt|npm run skillopt --) eval \S+ --skill \S+ --split test --out \S+ --batch --cfg-options /,
      );
      assert.doesNotMatch(cancel.stdout, /skillopt eval .*--cancel-batch/);
      assert.equal(sentAlone(), 0);
      assert.equal(existsSync(join(out, 'eval_summary.json')), false, 'the cancel evaluated something');

      // Once cancelled (ended), there is nothing more to cancel.
      const twice = await cli(args(['--out', out, '--cancel-batch']));
      assert.equal(twice.code, 0, twice.stdout + twice.stderr);
      assert.match(
        twice.stdout,
        new RegExp(
          `Nothing to cancel: the openai_compatible batch ${id} .* has already ended \\(cancelled, ${answered} of ${total} answered\\)`,
        ),
      );
      assert.equal(api.cancelRequests.length, 1);

      // The next run pays what the batch answered once, at the batch price, and asks only the rest alone.
      const again = await cli(args(['--out', out, '--batch']));
      assert.equal(again.code, 0, again.stdout + again.stderr);
      assert.equal(api.batches.size, 1, 'a new batch was sent');
      assert.equal(sentAlone(), total - answered);
      const rows = readFileSync(join(out, 'ledger.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { provider?: string; calls?: number });
      const calls = (batch: boolean): number =>
        rows
          .filter((r) => (r.provider ?? '').endsWith(':batch') === batch)
          .reduce((n, r) => n + (r.calls ?? 0), 0);
      assert.equal(calls(true), answered);
      assert.equal(calls(false), total - answered);
      const summary = JSON.parse(readFileSync(join(out, 'eval_summary.json'), 'utf8')) as { n_items: number };
      assert.equal(summary.n_items, total);
    } finally {
      await server.close();
    }
  });
});

/** `skillopt train --cancel-batch`: the final test evaluation's batch, cancelled after a stop. */
describe('skillopt train --cancel-batch (CLI, loopback batch API)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: LoopbackServer;
  // A fifth of the items answered per status check, checked every 2 s: the Ctrl-C lands part-way.
  const api = new OpenAiBatchApi({ pollsToEnd: 4 });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-cli-train-batch-'));
    cpSync(example, dir, { recursive: true });
    server = await startOpenAiServer(scriptedModels(exampleTasks()), { routes: api.routes });
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('cancels the test batch a stopped run left running; resuming collects it and finishes', async () => {
    const out = join(dir, 'run');
    const train = (more: string[], interruptWhen?: RegExp): Promise<Run> =>
      cli(
        [
          'train',
          join(dir, 'skillopt.yaml'),
          '--out',
          out,
          ...more,
          '--cfg-options',
          'cache.enabled=false',
          'train.num_epochs=1',
          ...scriptedWireOverrides(server.url),
          'model.target_supports_batch=true',
          'evaluation.batch_api=final',
          'evaluation.batch_poll_s=2',
        ],
        interruptWhen,
      );
    const first = await train([], /Submitted test batch/);
    assert.equal(first.code, 130, first.stdout + first.stderr);
    const id = /Submitted test batch (batch_loopback_\d+)/.exec(first.stdout)![1];

    const cancel = await train(['--cancel-batch']);
    assert.equal(cancel.code, 0, cancel.stdout + cancel.stderr);
    // Every test evaluation's batch still out is cancelled (they go out side by side), each named.
    const cancelled = [
      ...cancel.stdout.matchAll(
        /Cancelled the openai_compatible batch (\S+) of the test evaluation \(test_eval\w*\/provider_batch\.json\): [1-9]\d* of \d+ answered so far/g,
      ),
    ].map((m) => m[1]);
    assert.ok(cancelled.includes(id), cancel.stdout);
    assert.deepEqual([...api.cancelRequests].sort(), [...cancelled].sort());
    assert.match(
      cancel.stdout,
      /one by one at list price:\n {2}.*skillopt train \S+ --out \S+ --resume --cfg-options /,
    );
    assert.equal(existsSync(join(out, 'summary.json')), false, 'the cancel trained something');

    const resumed = await train(['--resume']);
    assert.equal(resumed.code, 0, resumed.stdout + resumed.stderr);
    for (const b of cancelled) assert.match(resumed.stdout, new RegExp(`Collecting test batch ${b} `));
    assert.ok(existsSync(join(out, 'summary.json')));
    assert.equal(api.cancelRequests.length, cancelled.length);
  });

  it('refuses --cancel-batch without --out, or with --fresh, before anything is sent', async () => {
    const bare = await cli(['train', join(dir, 'skillopt.yaml'), '--cancel-batch']);
    assert.equal(bare.code, 2);
    assert.match(
      bare.stderr,
      /--cancel-batch needs --out DIR \(the run whose batches to cancel\), without --fresh/,
    );
    const fresh = await cli([
      'train',
      join(dir, 'skillopt.yaml'),
      '--out',
      join(dir, 'x'),
      '--fresh',
      '--cancel-batch',
    ]);
    assert.equal(fresh.code, 2);
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

  /** `skillopt eval … --split selection --aa <runs> --out <out>` against the noisy target. */
  const aaEval = (runs: number, out: string, ...cfg: string[]): ReturnType<typeof cli> =>
    cli([
      'eval',
      join(dir, 'skillopt.yaml'),
      '--skill',
      join(dir, 'SKILL.md'),
      '--split',
      'selection',
      '--aa',
      String(runs),
      '--out',
      out,
      '--cfg-options',
      ...cfg,
      ...scriptedWireOverrides(server.url),
    ]);

  it('reports how often the strict and the paired gate would accept the skill over itself', async () => {
    const out = join(dir, 'aa');
    const run = await aaEval(4, out, 'cache.enabled=false');
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

  it('samples each A/A run as the gate does, evaluation.repeats times per item, each sample seeded apart', async () => {
    const out = join(dir, 'aa-repeats');
    const before = server.requests.length;
    const run = await aaEval(3, out, 'cache.enabled=false', 'evaluation.repeats=2');
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(
      run.stdout,
      /A\/A check: the same skill scored 3 times, 2 samples per item each \(evaluation\.repeats, as the gate samples\), on \d+ items/,
    );
    const summary = JSON.parse(readFileSync(join(out, 'eval_summary.json'), 'utf8')) as {
      aa: { runs: number; repeats?: number; scores: number[] };
      model_calls: number;
      n_items: number;
    };
    assert.equal(summary.aa.runs, 3);
    assert.equal(summary.aa.repeats, 2);
    assert.equal(summary.model_calls, 3 * 2 * summary.n_items, 'every run paid for both of its samples');
    // Six samples of every item went out, each with a seed of its own (the first with none).
    const seeds = server.requests
      .slice(before)
      .filter((r) => (r.body as { model?: string }).model === scriptedTargetModel)
      .map((r) => (r.body as { seed?: number }).seed ?? 0);
    for (let s = 0; s < 6; s++)
      assert.equal(seeds.filter((x) => x === s).length, summary.n_items, `sample ${s}`);
    // Run k is samples 2k and 2k + 1 (the first in the folder, sample m in repeat_<m + 1>): its
    // score is the mean over items of their two-sample means.
    const hardOf = (m: number): number[] =>
      readFileSync(
        join(out, 'eval_selection', m ? `repeat_${String(m + 1).padStart(2, '0')}` : '', 'results.jsonl'),
        'utf8',
      )
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { hard: number }).hard);
    for (let k = 0; k < 3; k++) {
      const [a, b] = [hardOf(2 * k), hardOf(2 * k + 1)];
      const mean = a.reduce((n, x, i) => n + (x + b[i]) / 2, 0) / a.length;
      assert.ok(
        Math.abs(summary.aa.scores[k] - mean) < 1e-12,
        `run ${k}: ${summary.aa.scores[k]} vs ${mean}`,
      );
    }
  });

  it('says when the A/A answers were replayed from the response cache, not sampled anew', async () => {
    const aa = (out: string): ReturnType<typeof cli> =>
      aaEval(2, join(dir, out), `cache.dir=${join(dir, 'aa-cache')}`);
    const first = await aa('aa-first');
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.doesNotMatch(first.stdout, /came from the response cache/);
    const second = await aa('aa-second');
    assert.equal(second.code, 0, second.stdout + second.stderr);
    assert.match(second.stdout, /\d+ answer\(s\) came from the response cache: .*cache\.enabled: false/);
    const summary = JSON.parse(readFileSync(join(dir, 'aa-second', 'eval_summary.json'), 'utf8')) as {
      aa: { cache_hits?: number };
      cache_hits: number;
    };
    assert.ok(summary.cache_hits > 0 && summary.aa.cache_hits === summary.cache_hits);
  });
});
