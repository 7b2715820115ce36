import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskItem } from '../../../src/engine/data/tasks';
import { evalPrepared } from '../../../src/engine/evalRun';
import { prepareRun, type PreparedRun } from '../../../src/engine/run';
import type { RolloutResult } from '../../../src/protocol/records';
import { contentText } from '../../support/loopback/core';
import { openAiMessages, startOpenAiServer, type LoopbackServer } from '../../support/loopback/openaiServer';
import {
  scriptedModels,
  scriptedOptimizerModel,
  scriptedTargetModel,
  scriptedWireOverrides,
} from '../../support/loopback/scriptedModels';
import { comparableHistory, readJson, runSim, spend, tempDir } from './helpers';

/** A skill-creator-style folder: SKILL.md, evals/evals.json (with an input file), and a config naming it as is. */
const fakeAgent = join(__dirname, '..', '..', 'fixtures', 'fakecli', 'fakeAgent.cjs');
const folderConfig = join(__dirname, '..', '..', 'fixtures', 'evals', 'invoice-totals', 'skillopt.yaml');

const ledgerRows = (dir: string): Array<Record<string, unknown>> =>
  readFileSync(join(dir, 'ledger.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const jsonl = (path: string): RolloutResult[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RolloutResult);

describe("training on a skill folder's own evals/evals.json, unconverted", function () {
  this.timeout(90_000);

  it('trains with the simulated models: expectations graded by the judge, paid under its own stage', async () => {
    const dir = tempDir('skillopt-evals-sim-');
    try {
      const prepared = prepareRun({
        configPath: folderConfig,
        outDir: dir.path,
        overrides: ['cache.enabled=false'],
      });
      assert.ok(
        prepared.warnings.some((w) =>
          /skill-creator evals for skill "invoice-totals", 9 read as tasks/.test(w),
        ),
      );
      const { outcome } = await runSim(prepared);
      assert.equal(outcome.status, 'finished');
      assert.ok(outcome.bestScore > outcome.baselineScore, `${outcome.bestScore} > ${outcome.baselineScore}`);

      const judged = ledgerRows(dir.path).filter((r) => r.stage === 'judge');
      assert.ok(judged.length > 0);
      assert.ok(judged.every((r) => r.role === 'optimizer' && r.model === 'sim-optimizer'));
      const { report } = readJson<{ report: { spend_by_role: Record<string, { calls: number }> } }>(
        dir.path,
        'summary.json',
      );
      assert.equal(
        report.spend_by_role.judge?.calls,
        judged.reduce((n, r) => n + Number(r.calls), 0),
      );
      // Every evaluation of every split went through the assertions: the test split's too.
      const test = jsonl(join(dir.path, 'test_eval_baseline', 'results.jsonl'));
      assert.equal(test.length, 3);
      const failed = test.filter((r) => r.hard === 0);
      assert.ok(failed.length > 0);
      for (const r of failed) assert.match(r.fail_reason ?? '', /assertions passed; failed: expectation "/);
      // Eval 1 (split seed 42) is a test item; its input file reached the chat target inline.
      const first = prepared.splits.test.unsealForEvaluation().find((t) => t.id === '1')!;
      const conversation = readJson<Array<{ content: string }>>(
        dir.path,
        'test_eval_baseline',
        'predictions',
        '1',
        'conversation.json',
      );
      assert.match(
        conversation[0].content,
        /File evals\/files\/invoice-a\.csv:\n```\nitem,quantity,unit_price/,
      );
      assert.deepEqual(
        first.files?.map((f) => f.name),
        ['evals/files/invoice-a.csv'],
      );
    } finally {
      dir.cleanup();
    }
  });

  it('pays each judge call once across a stop mid-rollout and a resume', async () => {
    const prepare = (dir: string): PreparedRun =>
      prepareRun({ configPath: folderConfig, outDir: dir, overrides: ['cache.enabled=false'] });
    const judgeCalls = (dir: string): number =>
      ledgerRows(dir)
        .filter((r) => r.stage === 'judge')
        .reduce((n, r) => n + Number(r.calls ?? 0), 0);
    const ref = tempDir('skillopt-evals-ref-');
    const dir = tempDir('skillopt-evals-resume-');
    try {
      await runSim(prepare(ref.path));
      const first = await runSim(
        prepare(dir.path),
        (e) => e.type === 'rollout/progress' && e.step === 2 && e.stage === 'rollout',
      );
      assert.equal(first.outcome.status, 'stopped');
      const second = await runSim(prepare(dir.path));
      assert.equal(second.outcome.status, 'finished');
      assert.deepEqual(comparableHistory(dir.path), comparableHistory(ref.path));
      assert.ok(judgeCalls(ref.path) > 0);
      assert.equal(judgeCalls(dir.path), judgeCalls(ref.path));
      assert.deepEqual(spend(dir.path), spend(ref.path));
    } finally {
      ref.cleanup();
      dir.cleanup();
    }
  });

  it('gives an agent target the input files in its workspace', async () => {
    const dir = tempDir('skillopt-evals-agent-');
    try {
      const prepared = prepareRun({
        configPath: folderConfig,
        outDir: dir.path,
        overrides: [
          'cache.enabled=false',
          'model.target_backend=command',
          `model.target_command=${process.execPath} ${fakeAgent} env`,
        ],
        models: { trustedWorkspace: true },
      });
      const summary = await evalPrepared(prepared, {
        skill: prepared.initialSkill,
        skillPath: prepared.skillPath,
        split: 'test',
        emit: () => undefined,
        signal: new AbortController().signal,
      });
      assert.equal(summary.n_items, 3);
      const conversation = readJson<Array<{ role: string; content: string }>>(
        dir.path,
        'eval_test',
        'predictions',
        '1',
        'conversation.json',
      );
      assert.match(
        conversation[0].content,
        /Input files \(in your working folder\):\n- evals\/files\/invoice-a\.csv/,
      );
      const seen = JSON.parse(conversation[1].content) as { files: string[] };
      assert.ok(seen.files.includes('evals/files/invoice-a.csv'), seen.files.join(', '));
    } finally {
      dir.cleanup();
    }
  });

  describe('over the OpenAI wire (loopback)', () => {
    let server: LoopbackServer;
    let dir: ReturnType<typeof tempDir>;
    let testItems: readonly TaskItem[];
    before(async () => {
      dir = tempDir('skillopt-evals-wire-');
      const probe = prepareRun({
        configPath: folderConfig,
        outDir: dir.path,
        dryRun: true,
        overrides: ['cache.enabled=false'],
      });
      testItems = probe.splits.test.unsealForEvaluation();
      const unreadable = testItems.find((t) => t.id === '1')!.input;
      server = await startOpenAiServer(
        // The judge never gives a usable grade for eval 1: that item is errored, not failed.
        scriptedModels([...probe.splits.train, ...probe.splits.val, ...testItems], (req, stage) =>
          stage === 'judge' && JSON.stringify(req.body).includes(unreadable)
            ? { kind: 'reply', text: 'It looks fine to me.' }
            : undefined,
        ),
      );
    });
    after(async () => {
      await server.close();
      dir.cleanup();
    });

    it('trains through the SDK with its own judge client; test items reach the judge, never the optimizer', async () => {
      const prepared = prepareRun({
        configPath: folderConfig,
        outDir: dir.path,
        overrides: [
          'cache.enabled=false',
          ...scriptedWireOverrides(server.url),
          'evaluation.judge_model=scripted-judge',
        ],
        models: { keys: { openai: 'fake-evals-wire-key-03' }, env: {} },
      });
      assert.equal(prepared.models.simulated, false);
      const { outcome } = await runSim(prepared);
      assert.equal(outcome.status, 'finished');

      const byModel = (model: string): typeof server.requests =>
        server.requests.filter((r) => (r.body as { model?: string }).model === model);
      const text = (r: (typeof server.requests)[number]): string =>
        openAiMessages(r)
          .map((m) => contentText(m.content))
          .join('\n');
      const judge = byModel('scripted-judge');
      const optimizer = byModel(scriptedOptimizerModel);
      assert.ok(judge.length > 0 && optimizer.length > 0 && byModel(scriptedTargetModel).length > 0);
      for (const item of testItems) {
        assert.ok(
          optimizer.every((r) => !text(r).includes(item.input)),
          `test item ${item.id} reached the optimizer`,
        );
        assert.ok(
          judge.some((r) => text(r).includes(item.input)),
          `test item ${item.id} was graded by the judge`,
        );
      }
      for (const evaluation of ['test_eval_baseline', 'test_eval', 'test_eval_final']) {
        const one = jsonl(join(dir.path, evaluation, 'results.jsonl')).find((r) => r.id === '1')!;
        assert.equal(one.outcome, 'errored');
        assert.match(one.error ?? '', /the judge's reply on task "1" could not be used/);
      }
      assert.ok(
        ledgerRows(dir.path).some((r) => r.kind === 'fallback' && r.stage === 'judge'),
        'the unusable grades are recorded as fallbacks',
      );
      const rows = ledgerRows(dir.path).filter((r) => r.stage === 'judge' && r.kind === 'usage');
      assert.ok(rows.length > 0 && rows.every((r) => r.model === 'scripted-judge'));
      assert.ok(rows.every((r) => Number(r.prompt_tokens) > 0));
    });
  });
});
