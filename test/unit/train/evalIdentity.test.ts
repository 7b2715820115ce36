import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';
import {
  claimEvalFolder,
  defaultEvalFolder,
  evalIdentity,
  type EvalIdentity,
} from '../../../src/engine/evalIdentity';
import { evalPrepared, type EvalSummary } from '../../../src/engine/evalRun';
import type { PreparedRun } from '../../../src/engine/run';
import { EVAL_FILE, RUN_FILE, RunLayout } from '../../../src/engine/store/layout';
import type { LoopbackServer } from '../../support/loopback/core';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import { scriptedModels, scriptedTargetModel } from '../../support/loopback/scriptedModels';
import { BatchRuns, exampleTasks } from './batchHelpers';
import { tempDir } from './helpers';

/**
 * Eval-only resumes per item, so a folder must only ever resume the same evaluation. Before this,
 * evaluating another skill into a folder scored it with the first skill's answers (0 calls). Over
 * the real `openai` SDK and the loopback server.
 */
describe('an eval-only folder holds one evaluation', function () {
  this.timeout(60_000);
  let server: LoopbackServer;
  const runs = new BatchRuns();

  before(async () => {
    server = await startOpenAiServer(scriptedModels(exampleTasks()));
  });
  after(async () => {
    await server.close();
    runs.cleanup();
  });

  const evaluate = (prepared: PreparedRun, skill = prepared.initialSkill): Promise<EvalSummary> =>
    evalPrepared(prepared, {
      skill,
      skillPath: prepared.skillPath,
      split: 'test',
      emit: () => undefined,
      signal: new AbortController().signal,
    });
  const targetCalls = (): number =>
    server.requests.filter((r) => (r.body as { model?: string }).model === scriptedTargetModel).length;

  it('resumes the same evaluation, and refuses another skill, other target settings or other tasks before spending', async () => {
    const out = tempDir('skillopt-eval-identity-');
    try {
      const first = await evaluate(runs.prepare(server, [], { outDir: out.path }));
      assert.ok(first.model_calls > 0);
      assert.ok(existsSync(new RunLayout(out.path).file(EVAL_FILE.identity)));

      // The same evaluation again: every answer is reused, nothing is paid twice.
      const before = targetCalls();
      const again = await evaluate(runs.prepare(server, [], { outDir: out.path }));
      assert.equal(targetCalls(), before);
      assert.equal(again.hard, first.hard);

      const refused = async (
        prepared: PreparedRun,
        skill: string | undefined,
        why: RegExp,
      ): Promise<void> => {
        const calls = targetCalls();
        await assert.rejects(evaluate(prepared, skill), (err: unknown) => {
          assert.ok(SkillOptError.is(err, 'config'), String(err));
          assert.match(err.message, why);
          assert.match(err.message, /eval_identity\.json/);
          assert.match(err.message, /another folder \(--out\)/);
          return true;
        });
        assert.equal(targetCalls(), calls, 'a refused evaluation spent');
      };
      const prepared = runs.prepare(server, [], { outDir: out.path });
      await refused(
        prepared,
        `${prepared.initialSkill}\n- A rule the first skill did not have.\n`,
        /as it was then/,
      );
      await refused(
        runs.prepare(server, ['model.target_temperature=0.7'], { outDir: out.path }),
        undefined,
        /as it was then/,
      );
      await refused(
        runs.prepare(server, ['env.split_ratio=5:2:3'], { outDir: out.path }),
        undefined,
        /as it was then/,
      );
    } finally {
      out.cleanup();
    }
  });

  it('refuses a folder whose tasks showed other image bytes under the same paths; a record from before images counted goes on', () => {
    const out = tempDir('skillopt-eval-images-');
    try {
      const page = join(out.path, 'page1.png');
      writeFileSync(page, Buffer.from([0x89, 0x50, 0x4e, 0x47, 1]));
      const prepared = runs.prepare(server, [], { outDir: join(out.path, 'eval') });
      const items = exampleTasks();
      items[0]!.images = [page];
      const id = (): EvalIdentity =>
        evalIdentity(prepared, {
          skill: prepared.initialSkill,
          skillPath: prepared.skillPath,
          split: 'test',
          items,
        });
      const folder = join(out.path, 'eval');
      mkdirSync(folder);
      claimEvalFolder(folder, id());
      claimEvalFolder(folder, id());
      writeFileSync(page, Buffer.from([0x89, 0x50, 0x4e, 0x47, 2]));
      assert.throws(
        () => claimEvalFolder(folder, id()),
        /holds an evaluation of .* on other images \(the bytes of an image the tasks show have changed since\)/,
      );
      assert.equal(defaultEvalFolder(folder, id()), `${folder}_2`);
      // Written before image bytes counted: the paths (in the digest) are all it can compare.
      const file = new RunLayout(folder).file(EVAL_FILE.identity);
      const { images: _dropped, ...older } = JSON.parse(readFileSync(file, 'utf8')) as EvalIdentity;
      writeFileSync(file, JSON.stringify(older));
      claimEvalFolder(folder, id());
      assert.equal(defaultEvalFolder(folder, id()), folder);
    } finally {
      out.cleanup();
    }
  });

  // `--out` given a training run's folder: the refusal said "an evaluation that does not record what
  // it evaluated … or delete this one", advice that would delete the run. With no ledger yet (a run
  // stopped before its first call) the evaluation was written into the training run's folder.
  it("refuses a training run's folder as such, with or without answers, and never says to delete it", () => {
    const out = tempDir('skillopt-eval-in-run-');
    try {
      const prepared = runs.prepare(server, [], { outDir: out.path });
      const id = evalIdentity(prepared, {
        skill: prepared.initialSkill,
        skillPath: prepared.skillPath,
        split: 'test',
        items: exampleTasks(),
      });
      const layout = new RunLayout(out.path);
      writeFileSync(layout.file(RUN_FILE.config), '{}');
      for (const withLedger of [false, true]) {
        if (withLedger) writeFileSync(layout.file(RUN_FILE.ledger), '');
        assert.throws(
          () => claimEvalFolder(out.path, id),
          (err: unknown) =>
            SkillOptError.is(err, 'config') &&
            /is a training run's folder/.test(err.message) &&
            /eval_only/.test(err.message) &&
            !/delete/.test(err.message),
        );
        assert.ok(!existsSync(layout.file(EVAL_FILE.identity)));
      }
    } finally {
      out.cleanup();
    }
  });

  it('tells an A/A check of several samples per item from one of a single sample, and leaves the rest alone', () => {
    const id = (repeats: number, aa?: number): string => {
      const prepared = runs.prepare(server, [`evaluation.repeats=${repeats}`]);
      return evalIdentity(prepared, {
        skill: prepared.initialSkill,
        skillPath: prepared.skillPath,
        split: 'selection',
        ...(aa ? { aa } : {}),
        items: exampleTasks(),
      }).digest;
    };
    // evaluation.repeats shapes an A/A check's runs only: a plain evaluation is the same one.
    assert.equal(id(1), id(3));
    assert.equal(id(1, 4), id(1, 4));
    assert.notEqual(id(1, 4), id(2, 4));
    assert.notEqual(id(2, 4), id(3, 4));
  });
});
