import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { PreparedRun } from '../../../src/engine/run';
import { CallLog, comparableHistory, prepareSim, runSim, tempDir } from './helpers';

// Three epochs so epoch 2 writes a meta skill.
const overrides = ['train.num_epochs=3'];

/** The first meta-skill reply comes back malformed, so the stage re-asks before it can save its result. */
function malformFirstMetaReply(prepared: PreparedRun): void {
  const inner = prepared.models.optimizer;
  let done = false;
  prepared.models.optimizer = {
    role: inner.role,
    backend: inner.backend,
    model: inner.model,
    chat: async (req, signal) => {
      const reply = await inner.chat(req, signal);
      if (req.stage !== 'meta_skill' || done) return reply;
      done = true;
      return { ...reply, text: 'not the JSON object the contract asks for' };
    },
  };
}

describe('kill and resume: the meta-skill reply is saved as it arrives', function () {
  this.timeout(120_000);

  it('never pays again for a meta-skill reply received before a stop', async () => {
    const refDir = tempDir('skillopt-ref-');
    const dir = tempDir('skillopt-meta-');
    try {
      const pr = prepareSim(refDir.path, overrides);
      malformFirstMetaReply(pr);
      const ref = new CallLog(pr);
      assert.equal((await runSim(pr, undefined, ref)).outcome.status, 'finished');
      // The malformed reply and the re-ask.
      assert.equal(ref.paid({ stage: 'meta_skill' }).length, 2);

      // Stopped the moment the first (malformed) reply is paid: the re-ask never gets its answer.
      const p1 = prepareSim(dir.path, overrides);
      malformFirstMetaReply(p1);
      const first = new CallLog(p1, { stopAfterReply: (c) => c.stage === 'meta_skill' });
      assert.equal((await runSim(p1, undefined, first)).outcome.status, 'stopped');
      assert.equal(first.paid({ stage: 'meta_skill' }).length, 1);
      const epochDir = join(dir.path, 'meta_skill', 'epoch_02');
      assert.ok(!existsSync(join(epochDir, 'meta_skill_result.json')));
      assert.ok(existsSync(join(epochDir, 'meta_skill_replies.jsonl')), 'the paid reply was not saved');

      // The resumed run reads the saved reply and pays only for the re-ask.
      const p2 = prepareSim(dir.path, overrides);
      const second = new CallLog(p2);
      assert.equal((await runSim(p2, undefined, second)).outcome.status, 'finished');
      assert.equal(second.paid({ stage: 'meta_skill' }).length, 1);
      // Once the result is written it is the one copy of what the replies said.
      assert.ok(existsSync(join(epochDir, 'meta_skill_result.json')));
      assert.ok(!existsSync(join(epochDir, 'meta_skill_replies.jsonl')));
      assert.deepEqual(comparableHistory(dir.path), comparableHistory(refDir.path));
    } finally {
      refDir.cleanup();
      dir.cleanup();
    }
  });
});
