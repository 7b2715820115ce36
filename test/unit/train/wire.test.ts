import assert from 'node:assert/strict';
import type { TaskItem } from '../../../src/engine/data/tasks';
import { prepareRun } from '../../../src/engine/run';
import type { StepRecord } from '../../../src/protocol/records';
import { contentText } from '../../support/loopback/core';
import { openAiMessages, startOpenAiServer, type LoopbackServer } from '../../support/loopback/openaiServer';
import {
  scriptedModels,
  scriptedOptimizerModel,
  scriptedTargetModel,
  scriptedWireOverrides,
} from '../../support/loopback/scriptedModels';
import { exampleConfig, readJson, runSim, tempDir } from './helpers';

/**
 * The whole loop through the real `openai` SDK over HTTP on 127.0.0.1: two epochs, with a 429, a
 * malformed analyst reply and a cut-off merge reply thrown in, and the request log inspected for
 * test-split leaks.
 */
describe('training loop over the OpenAI wire format (loopback)', function () {
  this.timeout(90_000);
  let server: LoopbackServer;
  let dir: ReturnType<typeof tempDir>;
  let testItems: readonly TaskItem[];
  const injected = { rateLimited: 0, malformed: 0, cutOff: 0 };

  before(async () => {
    dir = tempDir('skillopt-wire-');
    // Load the tasks once to give the scripted target its answers.
    const probe = prepareRun({
      configPath: exampleConfig,
      outDir: dir.path,
      dryRun: true,
      overrides: ['cache.enabled=false'],
    });
    testItems = probe.splits.test.unsealForEvaluation();
    const all = [...probe.splits.train, ...probe.splits.val, ...testItems];
    server = await startOpenAiServer(
      scriptedModels(all, (_req, stage) => {
        if (stage === 'target' && injected.rateLimited === 0) {
          injected.rateLimited++;
          return { kind: 'status', status: 429, message: 'slow down', headers: { 'retry-after': '0' } };
        }
        if (stage === 'analyst' && injected.malformed === 0) {
          injected.malformed++;
          return { kind: 'reply', text: '{"batch_size": 4, "patch": {"reasoning": "cut' };
        }
        if (stage === 'merge' && injected.cutOff === 0) {
          injected.cutOff++;
          return { kind: 'reply', text: 'I merged them: ```json\n{"reasoning": 1}\n```' };
        }
        return undefined;
      }),
    );
  });
  after(async () => {
    await server.close();
    dir.cleanup();
  });

  it('trains two epochs through the SDK, never showing a test item to the optimizer', async () => {
    const prepared = prepareRun({
      configPath: exampleConfig,
      outDir: dir.path,
      overrides: ['cache.enabled=false', ...scriptedWireOverrides(server.url), 'limits.max_retries=2'],
    });
    assert.equal(prepared.models.simulated, false);
    const { outcome, events } = await runSim(prepared);
    assert.equal(outcome.status, 'finished');
    assert.ok(outcome.bestScore > outcome.baselineScore);

    const optimizerRequests = server.requests.filter(
      (r) => (r.body as { model?: string }).model === scriptedOptimizerModel,
    );
    const targetRequests = server.requests.filter(
      (r) => (r.body as { model?: string }).model === scriptedTargetModel,
    );
    assert.ok(optimizerRequests.length > 10);
    const text = (r: (typeof server.requests)[number]): string =>
      openAiMessages(r)
        .map((m) => contentText(m.content))
        .join('\n');
    for (const item of testItems) {
      for (const r of optimizerRequests) {
        assert.ok(!text(r).includes(item.input), `test item ${item.id} reached the optimizer`);
        assert.ok(!text(r).includes(`(id=${item.id})`), `test id ${item.id} reached the optimizer`);
      }
    }
    // The check above is meaningful: the test items did go to the target, for the final evaluation.
    assert.ok(testItems.every((item) => targetRequests.some((r) => text(r).includes(item.input))));

    // The target alone (evaluation.no_skill_baseline, on by default) went through the same SDK:
    // every test item was also asked with none of the skill's text, and summary.json has its score.
    const noSkill = targetRequests.filter((r) => !text(r).includes('House Style Answers'));
    assert.ok(noSkill.length < targetRequests.length, 'the skills themselves reached the target too');
    assert.ok(testItems.every((item) => noSkill.some((r) => text(r).includes(item.input))));
    const summary = readJson<{ no_skill_test_hard?: number; no_skill_selection_hard?: number }>(
      dir.path,
      'summary.json',
    );
    assert.equal(typeof summary.no_skill_test_hard, 'number');
    assert.equal(typeof summary.no_skill_selection_hard, 'number');

    // Injected faults: the 429 was retried, the malformed replies were re-asked and recovered.
    assert.deepEqual(injected, { rateLimited: 1, malformed: 1, cutOff: 1 });
    const reasks = optimizerRequests.filter((r) => openAiMessages(r).some((m) => m.role === 'assistant'));
    assert.equal(reasks.length, 2);
    assert.deepEqual(
      events.filter((e) => e.type === 'fallback'),
      [],
      'a re-asked reply should not fall back',
    );
    const history = readJson<StepRecord[]>(dir.path, 'history.json');
    assert.ok(history.every((r) => r.tokens.rollout && r.tokens.rollout.prompt_tokens > 0));
    const slow = readJson<{ action: string }>(dir.path, 'slow_update', 'epoch_02', 'slow_result.json');
    assert.notEqual(slow.action, 'no_content');
  });
});
