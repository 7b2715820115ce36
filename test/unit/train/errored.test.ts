import assert from 'node:assert/strict';
import type { TaskItem } from '../../../src/engine/data/tasks';
import { SkillOptError } from '../../../src/engine/errors';
import { prepareRun, trainPrepared } from '../../../src/engine/run';
import type { RolloutResult, StepRecord } from '../../../src/protocol/records';
import { startAnthropicServer } from '../../support/loopback/anthropicServer';
import { contentText, type LoopbackServer } from '../../support/loopback/core';
import { openAiMessages, startOpenAiServer } from '../../support/loopback/openaiServer';
import {
  scriptedModels,
  scriptedOptimizerModel,
  scriptedTargetModel,
} from '../../support/loopback/scriptedModels';
import { planTrainEpoch } from '../../../src/engine/data/plan';
import { comparableHistory, exampleConfig, readJson, runSim, tempDir } from './helpers';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Errored is not failed: a target that could not answer is kept out of scores, gates and analysts. */
describe('errored target items (loopback wires)', function () {
  this.timeout(90_000);
  let dir: ReturnType<typeof tempDir>;
  let items: { train: readonly TaskItem[]; val: readonly TaskItem[]; all: TaskItem[] };
  const servers: LoopbackServer[] = [];

  before(() => {
    const probe = prepareRun({ configPath: exampleConfig, outDir: '/tmp/unused', dryRun: true });
    const test = probe.splits.test.unsealForEvaluation();
    items = {
      train: probe.splits.train,
      val: probe.splits.val,
      all: [...probe.splits.train, ...probe.splits.val, ...test],
    };
  });
  beforeEach(() => {
    dir = tempDir('skillopt-errored-');
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
    dir.cleanup();
  });

  const optimizerRequests = (s: LoopbackServer): number =>
    s.requests.filter((r) => (r.body as { model?: string }).model === scriptedOptimizerModel).length;

  function prepare(
    target: { backend: string; url: string },
    optimizerUrl: string,
  ): ReturnType<typeof prepareRun> {
    return prepareRun(prepareOptions(target, optimizerUrl));
  }

  function prepareOptions(
    target: { backend: string; url: string },
    optimizerUrl: string,
  ): Parameters<typeof prepareRun>[0] {
    return {
      configPath: exampleConfig,
      outDir: dir.path,
      overrides: [
        'cache.enabled=false',
        'model.optimizer_backend=openai',
        `model.target_backend=${target.backend}`,
        `model.optimizer=${scriptedOptimizerModel}`,
        `model.target=${scriptedTargetModel}`,
        `model.optimizer_base_url=${optimizerUrl}`,
        `model.target_base_url=${target.url}`,
        'limits.max_retries=0',
      ],
      models: { keys: { openai: 'sk-test-not-a-real-key', anthropic: 'sk-ant-test-not-a-real-key' } },
    };
  }

  // A stop over limits.max_errored_share after the analysts of the answered items were paid: the
  // resume asks the errored items again, so a minibatch saved then holds other trajectories than
  // the same minibatch now, and must be asked again rather than reused.
  for (const wire of ['openai', 'anthropic'] as const) {
    it(`a resume after too many errored rollouts equals an uninterrupted run (${wire} wire)`, async () => {
      const start = wire === 'openai' ? startOpenAiServer : startAnthropicServer;
      const healthy = await start(scriptedModels(items.all));
      const optimizer = await startOpenAiServer(scriptedModels(items.all));
      servers.push(healthy, optimizer);
      const clean = tempDir('skillopt-errored-clean-');
      try {
        const cleanRun = prepareRun({
          ...prepareOptions({ backend: wire, url: healthy.url }, optimizer.url),
          outDir: clean.path,
        });
        assert.equal((await runSim(cleanRun)).outcome.status, 'finished');
        const step1 = planTrainEpoch(items.train, { seed: 42, epoch: 1, batchSize: 8 })[0]!.items;
        const failing = new Set(step1.slice(0, 5).map((i) => i.input));
        let broken = true;
        const flaky = await start(
          scriptedModels(items.all, (req, stage) => {
            if (!broken || stage !== 'target') return undefined;
            const text = JSON.stringify(req.body);
            return [...failing].some((input) => text.includes(JSON.stringify(input).slice(1, -1)))
              ? { kind: 'status', status: 500, message: 'upstream crashed' }
              : undefined;
          }),
        );
        servers.push(flaky);
        const paidBefore = optimizerRequests(optimizer);
        await assert.rejects(
          runSim(prepare({ backend: wire, url: flaky.url }, optimizer.url)),
          (err: unknown) => SkillOptError.is(err, 'target'),
        );
        // Step 1's analysts wait for the rollout, which stops over the errored items: none was paid.
        assert.equal(optimizerRequests(optimizer), paidBefore, 'the optimizer was paid for a stopped batch');
        broken = false;
        const resumed = await runSim(prepare({ backend: wire, url: flaky.url }, optimizer.url));
        assert.equal(resumed.outcome.status, 'finished');
        assert.deepEqual(comparableHistory(dir.path), comparableHistory(clean.path));
      } finally {
        clean.cleanup();
      }
    });
  }

  /** A loopback OpenAI server whose target calls all answer 401 (the optimizer's are answered). */
  const targetUnauthorised = () =>
    startOpenAiServer(
      scriptedModels(items.all, (_req, stage) =>
        stage === 'target'
          ? { kind: 'status', status: 401, message: 'Incorrect API key provided' }
          : undefined,
      ),
    );

  it('a target that answers 401 stops the run at the baseline, names the cause, and pays no optimizer call (OpenAI wire)', async () => {
    const server = await targetUnauthorised();
    servers.push(server);
    const prepared = prepare({ backend: 'openai', url: server.url }, server.url);
    await assert.rejects(runSim(prepared), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'target'), String(err));
      assert.match(err.message, /could not answer \d+ of \d+ items in a selection evaluation/);
      assert.match(err.message, /not authorised/);
      assert.match(err.message, /Incorrect API key/);
      return true;
    });
    assert.equal(optimizerRequests(server), 0, 'the optimizer was paid although the target never answered');
  });

  // The stopped run's report.md could not be written (here: a folder stands in its place; a full disk
  // in use): the warning printed "SkillOptError: <message>", the class name of our own user error.
  it('a stopped report that cannot be written is warned about as one plain message', async () => {
    const server = await targetUnauthorised();
    servers.push(server);
    const report = join(dir.path, 'report.md');
    const lines: string[] = [];
    const prepared = prepare({ backend: 'openai', url: server.url }, server.url);
    await assert.rejects(
      trainPrepared(prepared, {
        // Once the run folder is the run's: a folder where report.md goes.
        emit: () => void (existsSync(report) || mkdirSync(report)),
        signal: new AbortController().signal,
        resumeCommand: 'resume',
        logger: { log: (_level, component, message) => lines.push(`${component}: ${message}`) },
      }),
      (err: unknown) => {
        assert.ok(SkillOptError.is(err, 'target'), String(err));
        return true;
      },
    );
    const warning = lines.find((l) => l.includes('report.md of the stopped run could not be written'));
    assert.ok(warning, lines.join('\n'));
    assert.match(warning, /report\.md: cannot write here/);
    assert.doesNotMatch(warning, /SkillOptError|\bError:/);
  });

  it('a target whose model is not found stops the run the same way (Anthropic wire)', async () => {
    const target = await startAnthropicServer(() => ({
      kind: 'status',
      status: 404,
      message: 'model: not found',
    }));
    const optimizer = await startOpenAiServer(scriptedModels(items.all));
    servers.push(target, optimizer);
    const prepared = prepare({ backend: 'anthropic', url: target.url }, optimizer.url);
    await assert.rejects(runSim(prepared), (err: unknown) => {
      assert.ok(SkillOptError.is(err, 'target'), String(err));
      assert.match(err.message, /model or endpoint not found/);
      return true;
    });
    assert.equal(optimizerRequests(optimizer), 0);
  });

  it('one item that errors is kept out of the selection score and out of every analyst prompt', async () => {
    const trainItem = items.train[0]!;
    const valItem = items.val[0]!;
    const seen = new Map<string, number>();
    const server = await startOpenAiServer(
      scriptedModels(items.all, (req, stage) => {
        if (stage !== 'target') return undefined;
        const user = openAiMessages(req)
          .filter((m) => m.role === 'user')
          .map((m) => contentText(m.content))
          .join('\n');
        for (const it of [trainItem, valItem]) {
          if (!user.includes(it.input)) continue;
          const n = (seen.get(it.id) ?? 0) + 1;
          seen.set(it.id, n);
          // The train item never answers; the selection item fails in step 1's evaluation only.
          if (it === trainItem || n === 2)
            return { kind: 'status', status: 500, message: 'upstream crashed' };
        }
        return undefined;
      }),
    );
    servers.push(server);
    const prepared = prepare({ backend: 'openai', url: server.url }, server.url);
    const { outcome } = await runSim(prepared);
    assert.equal(outcome.status, 'finished');

    const history = readJson<StepRecord[]>(dir.path, 'history.json');
    const first = history[0]!;
    assert.ok(first.candidate_hash, 'step 1 had no candidate to gate');
    assert.equal(first.selection_errored, 1);
    const rows = readFileSync(join(dir.path, 'steps', 'step_0001', 'selection_eval', 'results.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RolloutResult);
    const errored = rows.filter((r) => r.id === valItem.id);
    assert.equal(errored[0]?.outcome, 'errored');
    assert.equal(errored[0]?.error_kind, 'server');
    const answered = rows.filter((r) => r.outcome !== 'errored');
    assert.equal(answered.length, items.val.length - 1);
    const mean = answered.reduce((n, r) => n + r.hard, 0) / answered.length;
    assert.equal(first.selection_hard, mean, 'the selection score counted the errored item');
    const withTrainItem = history.find((r) => (r.rollout_errored ?? 0) > 0);
    assert.ok(withTrainItem, 'no step recorded the errored train item');
    const analystPrompts = server.requests
      .filter((r) => (r.body as { model?: string }).model === scriptedOptimizerModel)
      .map((r) => JSON.stringify(r.body));
    assert.ok(analystPrompts.length > 0);
    assert.ok(
      analystPrompts.every((p) => !p.includes(`(id=${trainItem.id})`)),
      'an errored item reached the optimizer as a trajectory',
    );
    const report = readFileSync(join(dir.path, 'report.md'), 'utf8');
    assert.match(
      report,
      /## Reliability\n\nThe target could not answer \d+ evaluation\(s\) \(provider error \(5xx\) ×\d+\)/,
    );
    // The provider's side: the calls that failed after every attempt, per role.
    assert.match(
      report,
      /Retried attempts: target \d+, optimizer \d+\. Calls that failed after every attempt: target [1-9]\d*, optimizer 0\./,
    );
  });
});
