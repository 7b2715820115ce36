import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { TaskItem } from '../../../src/engine/data/tasks';
import { hash } from '../../../src/engine/llm/sim/habits';
import { SkillOptError } from '../../../src/engine/errors';
import { prepareRun } from '../../../src/engine/run';
import { eventsFromRunFolder } from '../../../src/engine/store/runReader';
import { stepCandidateFromFolder } from '../../../src/extension/review/runFiles';
import type { EngineEvent } from '../../../src/protocol/events';
import type { StepRecord } from '../../../src/protocol/records';
import { describeGateTest } from '../../../src/protocol/gateText';
import { candidateName } from '../../../src/protocol/webview';
import { isAccepted } from '../../../src/protocol/vocabulary';
import { lastUserText as anthropicUser, startAnthropicServer } from '../../support/loopback/anthropicServer';
import type { Handler, LoopbackServer, RecordedRequest } from '../../support/loopback/core';
import { lastUserText as openAiUser, startOpenAiServer } from '../../support/loopback/openaiServer';
import { scriptedModels, scriptedTargetModel } from '../../support/loopback/scriptedModels';
import { exampleConfig, read, readJson, runSim, tempDir } from './helpers';

/**
 * A target whose answers ignore the skill: right with probability 1 − errorRate, drawn from a hash
 * of the whole request (skill, task and seed), so every candidate is exactly as good as the last.
 */
function noisyTarget(
  tasks: readonly TaskItem[],
  errorRate: number,
  user: (r: RecordedRequest) => string,
): Handler {
  return (req) => {
    const text = user(req);
    const task = tasks.find((t) => text.includes(t.input.trim()));
    const wrong = hash(JSON.stringify(req.body)) % 1000 < errorRate * 1000;
    return { kind: 'reply', text: `<answer>${wrong || !task ? 'not sure' : task.answers[0]}</answer>` };
  };
}

/** Candidates that reached a verdict of their own gate (not the final check or a person). */
const gated = (events: EngineEvent[]): Array<Extract<EngineEvent, { type: 'gate/verdict' }>> =>
  events.flatMap((e) =>
    e.type === 'gate/verdict' && e.origin !== 'final' && e.origin !== 'human' ? [e] : [],
  );

describe('the paired gate in the loop (evaluation.gate_test: paired)', function () {
  this.timeout(240_000);
  let dir: ReturnType<typeof tempDir>;
  let tasks: TaskItem[];
  const servers: LoopbackServer[] = [];

  before(() => {
    dir = tempDir('skillopt-paired-');
    const probe = prepareRun({ configPath: exampleConfig, outDir: dir.path, dryRun: true });
    tasks = [...probe.splits.train, ...probe.splits.val, ...probe.splits.test.unsealForEvaluation()];
  });
  after(async () => {
    for (const s of servers) await s.close();
    dir.cleanup();
  });

  /** The scripted target (the skill's fixes count) over a wire, wrong on `percent`% of requests. */
  const scriptedNoisy = async (
    percent: number,
    wire: 'openai' | 'anthropic' = 'openai',
  ): Promise<LoopbackServer> => {
    const handler = scriptedModels(tasks, (req, stage) =>
      stage === 'target' && hash(JSON.stringify(req.body)) % 100 < percent
        ? { kind: 'reply', text: '<answer>not sure</answer>' }
        : undefined,
    );
    const server = await (wire === 'openai' ? startOpenAiServer(handler) : startAnthropicServer(handler));
    servers.push(server);
    return server;
  };

  const train = async (name: string, overrides: string[]) => {
    const out = `${dir.path}/${name}`;
    const prepared = prepareRun({
      configPath: exampleConfig,
      outDir: out,
      overrides: ['cache.enabled=false', 'train.num_epochs=3', ...overrides],
    });
    const { outcome, events } = await runSim(prepared);
    assert.equal(outcome.status, 'finished');
    return { events, history: readJson<StepRecord[]>(out, 'history.json') };
  };

  for (const wire of ['openai', 'anthropic'] as const) {
    it(`keeps no more no-change candidates than alpha allows against a noisy ${wire} target (strict gate beside it)`, async () => {
      const server =
        wire === 'openai'
          ? await startOpenAiServer(noisyTarget(tasks, 0.3, openAiUser))
          : await startAnthropicServer(noisyTarget(tasks, 0.3, anthropicUser));
      servers.push(server);
      const target = [
        `model.target_backend=${wire}`,
        `model.target=${scriptedTargetModel}`,
        `model.target_base_url=${server.url}`,
        'evaluation.repeats=2',
      ];
      const strict = await train(`${wire}-strict`, target);
      const paired = await train(`${wire}-paired`, [...target, 'evaluation.gate_test=paired']);

      const strictKept = gated(strict.events).filter((v) => isAccepted(v.action)).length;
      const pairedVerdicts = gated(paired.events);
      assert.ok(pairedVerdicts.length >= 6, `${pairedVerdicts.length} candidates gated`);
      // At alpha 0.05 a no-change candidate gets through 1 time in 20 at most; over ten or so
      // candidates more than one would mean the test is not holding its level.
      const pairedKept = pairedVerdicts.filter((v) => isAccepted(v.action));
      assert.ok(pairedKept.length <= 1, `the paired gate kept ${pairedKept.length} no-change candidates`);
      for (const v of pairedVerdicts)
        assert.equal(isAccepted(v.action), v.gateTest!.p_value <= 0.05, JSON.stringify(v));
      // Every gated step record carries the test, with an interval around its mean delta.
      const steps = paired.history.filter((r) => r.gate_test);
      assert.ok(steps.length > 0);
      for (const r of steps) {
        const t = r.gate_test!;
        assert.ok(t.ci_low <= t.mean_delta && t.mean_delta <= t.ci_high, JSON.stringify(t));
        // The interval is the test's own: it excludes 0 exactly when the test rejects.
        assert.equal(t.ci_low > 0, t.p_value <= t.alpha, JSON.stringify(t));
        assert.equal(t.ci_level, 1 - 2 * t.alpha);
        assert.equal(t.repeats, 2);
      }
      // The strict gate's false accepts on the same target, beside it.
      const strictGated = gated(strict.events).length;
      console.log(
        `      ${wire}: strict gate kept ${strictKept} of ${strictGated} no-change candidates; paired kept ${pairedKept.length} of ${pairedVerdicts.length}`,
      );
    });
  }

  it('on_inconclusive: more_repeats samples both skills up to max_repeats and looks once more', async () => {
    // Real fixes under heavy noise: some first looks cannot tell them apart yet.
    const server = await scriptedNoisy(25);
    const run = await train('more', [
      'model.target_backend=openai',
      `model.target=${scriptedTargetModel}`,
      `model.target_base_url=${server.url}`,
      'evaluation.gate_test=paired',
      'evaluation.on_inconclusive=more_repeats',
      'evaluation.max_repeats=3',
    ]);
    const tests = gated(run.events).map((v) => v.gateTest!);
    assert.ok(tests.length > 0);
    // A first look that was inconclusive was followed by a second one at three repeats.
    const second = tests.filter((t) => t.repeats === 3);
    assert.ok(second.length > 0, JSON.stringify(tests));
    for (const t of tests) assert.equal(t.alpha, 0.025, 'each of the two looks is made at alpha / 2');
    const step = run.history.find((r) => r.gate_test?.repeats === 3)!;
    const sel = `${dir.path}/more/steps/step_${String(step.step).padStart(4, '0')}/selection_eval`;
    assert.ok(existsSync(`${sel}/repeat_03/results.jsonl`));
    assert.ok(existsSync(`${sel}/current_skill/repeat_03/results.jsonl`));
    // The current skill's first sample was paid where it was taken: read back, not bought again.
    assert.ok(!existsSync(`${sel}/current_skill/results.jsonl`));
    // With the response cache off, no selection request went over the wire twice.
    const selection = new Set(
      prepareRun({ configPath: exampleConfig, outDir: dir.path, dryRun: true }).splits.val.map((t) =>
        t.input.trim(),
      ),
    );
    const sent = server.requests
      .filter((r) => [...selection].some((input) => openAiUser(r).includes(input)))
      .map((r) => JSON.stringify(r.body));
    assert.ok(sent.length > 0);
    assert.equal(new Set(sent).size, sent.length, 'a selection sample was paid twice');
  });

  for (const wire of ['openai', 'anthropic'] as const) {
    it(`still keeps candidates that truly fix items, with a noisy ${wire} target`, async () => {
      // The scripted target applies the skill (its habits fixed by the right rules) and then errs 10%.
      const server = await scriptedNoisy(10, wire);
      const run = await train(`fixes-${wire}`, [
        `model.target_backend=${wire}`,
        `model.target=${scriptedTargetModel}`,
        `model.target_base_url=${server.url}`,
        'evaluation.repeats=2',
        'evaluation.gate_test=paired',
      ]);
      const kept = gated(run.events).filter((v) => isAccepted(v.action));
      assert.ok(kept.length > 0, 'no real fix got through the paired gate');
      for (const v of kept) assert.ok(v.gateTest!.p_value <= 0.05 && v.gateTest!.mean_delta > 0);
    });
  }

  it('keeps the simulated target’s real fixes and records the test in history.json', async () => {
    const run = await train('sim', ['evaluation.gate_test=paired']);
    const kept = run.history.filter((r) => isAccepted(r.action));
    assert.ok(kept.length > 0);
    for (const r of kept) assert.equal(r.gate_test?.verdict, 'accept');
    // A run folder read back gives the same verdict events, the test included.
    const replayed = eventsFromRunFolder(`${dir.path}/sim`).flatMap((e) =>
      e.type === 'gate/verdict' && e.origin === 'step' ? [e] : [],
    );
    for (const r of run.history.filter((h) => h.gate_test))
      assert.deepEqual(replayed.find((e) => e.step === r.step)?.gateTest, r.gate_test);
    // Every gate's verdict, the epoch ends' included, reads back as the live run emitted it.
    assert.deepEqual(gated(eventsFromRunFolder(`${dir.path}/sim`)), gated(run.events));
    // So does the verdict beside an epoch end's candidate opened from the folder.
    for (const live of gated(run.events).filter((v) => v.origin === 'slow_update'))
      assert.deepEqual(stepCandidateFromFolder(`${dir.path}/sim`, live.step, 'slow_update')?.verdict, live);
    // report.md has a row per tested step, in the same words as the CLI and the tree.
    const report = read(`${dir.path}/sim`, 'report.md');
    assert.match(report, /## Gate tests/);
    const first = run.history.find((r) => r.gate_test)!;
    assert.ok(report.includes(describeGateTest(first.gate_test!)), report);
    // So does each epoch end's gate, named as the UI names it.
    const ends = run.events.flatMap((e) =>
      e.type === 'gate/verdict' && (e.origin === 'slow_update' || e.origin === 'meta_reflect') && e.gateTest
        ? [{ ...e, origin: e.origin }]
        : [],
    );
    assert.ok(ends.length > 0, 'an epoch end went through the paired gate');
    for (const e of ends)
      assert.ok(
        report.includes(
          `| ${candidateName(e.origin, e.step, e.epoch)} | ${e.action} | ${describeGateTest(e.gateTest!)} |`,
        ),
        report,
      );
    assert.match(
      describeGateTest(first.gate_test!),
      /^p (< 0\.001|\d\.\d{3}) \((sign|permutation) test, \d+ items × 1\): Δ [+−]\d\.\d{3}, 90% interval \[[+−]\d\.\d{3}, [+−]\d\.\d{3}\]$/,
    );
  });

  it('max_item_regressions rejects a candidate that breaks more items than allowed, even when its mean rises', async () => {
    const server = await scriptedNoisy(10);
    const run = await train('regressions', [
      'model.target_backend=openai',
      `model.target=${scriptedTargetModel}`,
      `model.target_base_url=${server.url}`,
      'evaluation.max_item_regressions=0',
    ]);
    const steps = run.history.filter((r) => r.item_regressions);
    assert.ok(steps.length > 0);
    for (const r of steps) {
      const reg = r.item_regressions!;
      assert.equal(reg.max, 0);
      if (isAccepted(r.action)) assert.deepEqual(reg.items, []);
      if (reg.rejected) assert.ok(r.action === 'reject' && reg.items.length > 0);
    }
    // The strict gate alone would have kept it: the mean rose, yet broken items turned it down.
    const hidden = gated(run.events).filter(
      (v) => v.itemRegressions?.rejected && v.candidateScore > v.currentScore,
    );
    assert.ok(hidden.length > 0, 'no candidate with a higher mean was turned down for broken items');
    assert.ok(hidden.every((v) => v.action === 'reject' && v.itemRegressions!.items.length > 0));
  });

  it('refuses gate settings it cannot honour before spending, naming the key and the fix', () => {
    const refused = (overrides: string[], key: string, fix: RegExp): void =>
      assert.throws(
        () => prepareRun({ configPath: exampleConfig, outDir: dir.path, dryRun: true, overrides }),
        (err: unknown) =>
          SkillOptError.is(err, 'config') && err.place.key === key && fix.test(err.place.fix ?? ''),
      );
    refused(['evaluation.on_inconclusive=ask'], 'evaluation.on_inconclusive', /gate_test: paired/);
    refused(
      ['evaluation.gate_test=paired', 'evaluation.on_inconclusive=ask'],
      'evaluation.on_inconclusive',
      /review.mode: gate-then-human/,
    );
    refused(
      ['evaluation.gate_test=paired', 'evaluation.use_semantic_density=true'],
      'evaluation.use_semantic_density',
      /use_semantic_density: false/,
    );
    refused(
      ['evaluation.gate_test=paired', 'evaluation.on_inconclusive=more_repeats', 'evaluation.repeats=2'],
      'evaluation.max_repeats',
      /more than 2/,
    );
    // A cap nothing reads is not silently dropped.
    refused(['evaluation.max_repeats=3'], 'evaluation.max_repeats', /on_inconclusive: more_repeats/);
    // The interval is at 1 − 2·alpha: from alpha 0.5 on it is no interval at all.
    refused(['evaluation.alpha=0.5'], 'evaluation.alpha', /between 0 and 0\.5/);
  });
});
