import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cacheKey } from '../../../src/engine/llm/cache';
import { repeatsNotice } from '../../../src/engine/modelNotices';
import type { ChatRequest } from '../../../src/engine/llm/types';
import { prepareRun } from '../../../src/engine/run';
import { readJsonl } from '../../../src/engine/store/jsonl';
import { RESULT_ROWS } from '../../../src/engine/store/runRows';
import { startOpenAiServer, type LoopbackServer } from '../../support/loopback/openaiServer';
import {
  scriptedModels,
  scriptedOptimizerModel,
  scriptedTargetModel,
} from '../../support/loopback/scriptedModels';
import { exampleConfig, read, runSim, tempDir } from './helpers';

const backend = { provider: 'openai', model: 'm', cacheParams: {} };
const request: ChatRequest = {
  role: 'target',
  stage: 'selection',
  messages: [{ role: 'user', content: 'q' }],
  temperature: 0,
};

/** evaluation.repeats: each selection item sampled N times, each repeat paid, cached and seeded apart. */
describe('repeated selection trials (evaluation.repeats)', function () {
  this.timeout(120_000);
  let server: LoopbackServer;
  let dir: ReturnType<typeof tempDir>;
  let valSize = 0;

  before(async () => {
    dir = tempDir('skillopt-repeats-');
    const probe = prepareRun({ configPath: exampleConfig, outDir: dir.path, dryRun: true });
    valSize = probe.splits.val.length;
    const all = [...probe.splits.train, ...probe.splits.val, ...probe.splits.test.unsealForEvaluation()];
    // The third sample (seed 2) of every target call answers wrong: a per-item mean of 3 shows it.
    server = await startOpenAiServer(
      scriptedModels(all, (req, stage) =>
        stage === 'target' && (req.body as { seed?: number }).seed === 2
          ? { kind: 'reply', text: '<answer>wrong on purpose</answer>' }
          : undefined,
      ),
    );
  });
  after(async () => {
    await server.close();
    dir.cleanup();
  });

  it('keeps the first repeat’s cache key and gives every later repeat and seed a key of its own', () => {
    const first = cacheKey(backend, request);
    assert.equal(cacheKey(backend, { ...request, repeat: 0 }), first);
    const second = cacheKey(backend, { ...request, repeat: 1, seed: 1 });
    assert.notEqual(second, first);
    assert.notEqual(cacheKey(backend, { ...request, repeat: 2, seed: 2 }), second);
    assert.notEqual(cacheKey(backend, { ...request, repeat: 1, seed: 7 }), second);
  });

  it('says once what repeats can vary on a target without seeds, the paired gate’s max_repeats included', () => {
    const prepared = (overrides: string[]) =>
      prepareRun({ configPath: exampleConfig, outDir: dir.path, dryRun: true, overrides });
    const more = [
      'evaluation.gate_test=paired',
      'evaluation.on_inconclusive=more_repeats',
      'evaluation.max_repeats=3',
    ];
    const said = (overrides: string[]) => prepared(overrides).warnings.filter((w) => /repeats/.test(w));
    assert.deepEqual(said(['evaluation.repeats=2']), [
      'evaluation.repeats: 2: the simulated target is deterministic, so its repeats give the same answers',
    ]);
    // One sample per item, but an inconclusive gate samples up to three: those repeats are alike too.
    assert.deepEqual(said(more), [
      'evaluation.max_repeats: 3: the simulated target is deterministic, so its repeats give the same answers',
    ]);
    assert.deepEqual(said([]), []);
    const cfg = prepared(more).config;
    assert.equal(
      repeatsNotice('anthropic', cfg),
      'evaluation.max_repeats: 3: the anthropic target takes no seed; repeats differ only by sampling (target temperature 0)',
    );
    assert.equal(repeatsNotice('openai', cfg), undefined, 'an OpenAI target takes seeds');
  });

  it('counts every repeat in the call estimate', () => {
    const est = (n: number) =>
      prepareRun({
        configPath: exampleConfig,
        outDir: dir.path,
        dryRun: true,
        overrides: [`evaluation.repeats=${n}`],
      }).estimate;
    const one = est(1);
    const three = est(3);
    assert.equal(one.once.baseline, valSize);
    assert.equal(three.once.baseline, 3 * valSize);
    assert.equal(three.perStep.selection, 3 * one.perStep.selection);
    assert.equal(three.once.final_selection, 3 * one.once.final_selection);
    assert.equal(three.perEpochEnd.selection ?? 0, 3 * (one.perEpochEnd.selection ?? 0));
    assert.ok(three.total > one.total);
  });

  it('samples each selection item N times over the OpenAI wire, seeded, paid and cached per repeat, scored by per-item means', async () => {
    const out = join(dir.path, 'run');
    const cacheDir = join(dir.path, 'cache');
    const overrides = [
      'cache.enabled=true',
      `cache.dir=${cacheDir}`,
      'model.target_temperature=0',
      'model.optimizer_backend=openai_compatible',
      'model.target_backend=openai',
      `model.optimizer=${scriptedOptimizerModel}`,
      `model.target=${scriptedTargetModel}`,
      `model.optimizer_base_url=${server.url}`,
      `model.target_base_url=${server.url}`,
      'train.num_epochs=1',
      'evaluation.repeats=3',
    ];
    const prepared = prepareRun({ configPath: exampleConfig, outDir: out, overrides });
    assert.ok(!prepared.warnings.some((w) => /repeats/.test(w)), 'an OpenAI target takes seeds: no notice');
    const { outcome, events } = await runSim(prepared);
    assert.equal(outcome.status, 'finished');

    const base = join(out, 'selection_eval_baseline');
    const rows = (d: string) => readJsonl(join(d, 'results.jsonl'), RESULT_ROWS);
    const first = rows(base);
    assert.equal(first.length, valSize);
    assert.equal(rows(join(base, 'repeat_02')).length, valSize);
    const third = rows(join(base, 'repeat_03'));
    assert.ok(
      third.every((r) => r.hard === 0),
      'the third repeat (seed 2) answered wrong everywhere',
    );
    assert.ok(!existsSync(join(base, 'repeat_04')));

    // Per-item means: two of three samples right where the first was right.
    const scored = events.find((e) => e.type === 'baseline/scored');
    assert.ok(scored?.type === 'baseline/scored');
    const firstHard = first.reduce((n, r) => n + r.hard, 0) / first.length;
    assert.ok(firstHard > 0);
    assert.ok(Math.abs(scored.hard - (firstHard * 2) / 3) < 1e-12, `${scored.hard} vs ${firstHard}`);

    // The wire saw seeds 1 and 2 for the later repeats and none for the first.
    const targetSeeds = server.requests
      .filter((r) => (r.body as { model?: string }).model === scriptedTargetModel)
      .map((r) => (r.body as { seed?: number }).seed);
    for (const s of [undefined, 1, 2]) assert.ok(targetSeeds.includes(s), `seed ${String(s)} sent`);

    // Every repeat is a paid call in the ledger: baseline selection = 3 × the split.
    const ledger = read(out, 'ledger.jsonl')
      .split('\n')
      .filter(Boolean)
      .map(
        (l) =>
          JSON.parse(l) as {
            kind: string;
            stage: string;
            phase?: string;
            calls?: number;
            cache_hits?: number;
          },
      );
    const baselineCalls = ledger
      .filter((r) => r.kind === 'usage' && r.stage === 'selection' && r.phase === 'baseline')
      .reduce((n, r) => n + (r.calls ?? 0), 0);
    assert.equal(baselineCalls, 3 * valSize);

    // A second run answers every repeat from the cache: nothing new reaches the wire for selection.
    const before = server.requests.length;
    const again = prepareRun({ configPath: exampleConfig, outDir: join(dir.path, 'again'), overrides });
    const second = await runSim(again);
    const scoredAgain = second.events.find((e) => e.type === 'baseline/scored');
    assert.ok(scoredAgain?.type === 'baseline/scored');
    assert.equal(scoredAgain.hard, scored.hard);
    const newTarget = server.requests
      .slice(before)
      .filter((r) => (r.body as { model?: string }).model === scriptedTargetModel);
    assert.equal(newTarget.length, 0, 'every target call (each repeat) came from the cache');
  });
});
