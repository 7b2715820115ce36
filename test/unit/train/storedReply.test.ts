import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepareRun } from '../../../src/engine/run';
import {
  INLINE_REPLY_CHARS,
  replyReference,
  rowToStore,
  withReply,
} from '../../../src/engine/train/storedReply';
import type { RolloutRow } from '../../../src/protocol/records';
import { anthropicPromptText, startAnthropicServer } from '../../support/loopback/anthropicServer';
import type { Handler, LoopbackServer, RecordedRequest } from '../../support/loopback/core';
import { openAiPromptText, startOpenAiServer } from '../../support/loopback/openaiServer';
import {
  scriptedModels,
  scriptedTargetModel,
  scriptedWireOverrides,
} from '../../support/loopback/scriptedModels';
import { comparableHistory, exampleConfig, runSim, tempDir } from './helpers';

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/**
 * Issue 19: a 100 KB reply was stored in `results.jsonl`, in `conversation.json` and in the cache.
 * A long reply now lives once in the run folder (its conversation file); the row names that file,
 * and a resumed run reads the reply back from it, so the analysts see what they saw before the stop.
 */
for (const wire of ['openai', 'anthropic'] as const) {
  describe(`long target replies, stored once (${wire} wire, loopback)`, function () {
    this.timeout(120_000);
    let server: LoopbackServer;
    let asked = 0;
    const promptText = (r: RecordedRequest): string =>
      wire === 'openai' ? openAiPromptText(r) : anthropicPromptText(r);

    before(async () => {
      const probeDir = tempDir('skillopt-probe-');
      const probe = prepareRun({ configPath: exampleConfig, outDir: probeDir.path, dryRun: true });
      probeDir.cleanup();
      const tasks = [...probe.splits.train, ...probe.splits.val, ...probe.splits.test.unsealForEvaluation()];
      const base = scriptedModels(tasks);
      // Each target reply: a head line the analysts' excerpt keeps, 6,000 characters of working
      // with a marker in the middle (outside any excerpt), then the scripted answer.
      const handler: Handler = async (req) => {
        const out = await base(req);
        if ((req.body as { model?: string }).model !== scriptedTargetModel || out.kind !== 'reply')
          return out;
        const n = ++asked;
        const pad = 'w'.repeat(3000);
        return { ...out, text: `HEAD-${n} working:\n${pad}MID-${n}-MARK${pad}\n${out.text ?? ''}` };
      };
      server = wire === 'openai' ? await startOpenAiServer(handler) : await startAnthropicServer(handler);
    });
    after(async () => {
      await server.close();
    });

    const overrides = (): string[] => [
      'cache.enabled=false',
      'train.num_epochs=1',
      ...scriptedWireOverrides(server.url, wire),
    ];

    it('keeps each long reply in its conversation file only, and a resumed run reads it back', async () => {
      const ref = tempDir('skillopt-reply-ref-');
      const dir = tempDir('skillopt-reply-');
      try {
        await runSim(prepareRun({ configPath: exampleConfig, outDir: ref.path, overrides: overrides() }));

        // Stop once step 1's rollout is written, before its analysts have all answered.
        const first = await runSim(
          prepareRun({ configPath: exampleConfig, outDir: dir.path, overrides: overrides() }),
          (e) => e.type === 'rollout/progress' && e.step === 1 && e.stage === 'rollout' && e.done === e.total,
        );
        assert.equal(first.outcome.status, 'stopped');
        const rolloutDir = join(dir.path, 'steps', 'step_0001', 'rollout');
        const rows = readFileSync(join(rolloutDir, 'results.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as RolloutRow);
        assert.ok(rows.length > 0);
        for (const row of rows) {
          assert.equal(row.response, undefined, `${row.id}: the row repeats the reply`);
          assert.ok(row.response_chars! > INLINE_REPLY_CHARS);
          const conversation = JSON.parse(readFileSync(join(rolloutDir, row.response_in!), 'utf8')) as Array<{
            role?: string;
            content?: string;
          }>;
          const reply = conversation.filter((m) => m.role === 'assistant').at(-1)?.content ?? '';
          assert.equal(reply.length, row.response_chars);
          assert.match(reply, /^HEAD-\d+ working/);
        }

        const before = server.requests.length;
        const second = await runSim(
          prepareRun({ configPath: exampleConfig, outDir: dir.path, overrides: overrides() }),
        );
        assert.equal(second.outcome.status, 'finished');
        assert.deepEqual(comparableHistory(dir.path), comparableHistory(ref.path));
        // The resumed analysts read step 1's replies from their conversation files.
        const resumedText = server.requests.slice(before).map(promptText).join('\n');
        const heads = rows.map((r) => {
          const conversation = readFileSync(join(rolloutDir, r.response_in!), 'utf8');
          return /HEAD-\d+/.exec(conversation)![0];
        });
        assert.ok(
          heads.some((h) => resumedText.includes(`${h} working`)),
          'no resumed analyst prompt carries a reply read back from a conversation file',
        );

        // Each reply's middle (which no excerpt repeats) is in exactly one file of the run folder.
        const files = filesUnder(dir.path).map((p) => readFileSync(p, 'utf8'));
        const marks = new Set(files.join('\n').match(/MID-\d+-MARK/g));
        assert.ok(marks.size >= rows.length);
        for (const mark of marks) {
          const holders = files.filter((f) => f.includes(mark));
          assert.equal(holders.length, 1, `${mark} is in ${holders.length} files`);
          assert.equal(holders[0].split(mark).length - 1, 1, `${mark} is stored twice in one file`);
        }
      } finally {
        ref.cleanup();
        dir.cleanup();
      }
    });
  });
}

describe('a row whose reply lives in its conversation file', () => {
  const long = `HEAD ${'x'.repeat(INLINE_REPLY_CHARS)}`;
  const row = {
    id: 'q1',
    hard: 1,
    soft: 1,
    task_description: 'q',
    predicted_answer: 'a',
    expected: ['a'],
    n_turns: 1,
  };

  it('is read back whole, and not at all when the file is gone, damaged or holds another reply', () => {
    const dir = tempDir('skillopt-reply-row-');
    try {
      const file = join(dir.path, 'predictions', 'q1', 'conversation.json');
      const records = [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: long },
      ];
      const ref = replyReference(long, records.slice(1), file, dir.path);
      assert.deepEqual(ref, { response_in: 'predictions/q1/conversation.json', response_chars: long.length });
      // Short replies, and a reply that is not the conversation's last assistant message, stay inline.
      assert.equal(
        replyReference('short', [{ role: 'assistant', content: 'short' }], file, dir.path),
        undefined,
      );
      assert.equal(
        replyReference(long, [{ role: 'assistant', content: 'other' }], file, dir.path),
        undefined,
      );

      const stored = rowToStore({ ...row, response: long, ...ref });
      assert.equal(stored.response, undefined);
      assert.equal(withReply(stored, file), undefined, 'a missing file gave a reply');
      mkdirSync(join(dir.path, 'predictions', 'q1'), { recursive: true });
      writeFileSync(file, '[{"role": "assistant", "cont');
      assert.equal(withReply(stored, file), undefined, 'a torn file gave a reply');
      writeFileSync(file, JSON.stringify([{ role: 'assistant', content: 'edited' }]));
      assert.equal(withReply(stored, file), undefined, 'another reply was taken for this one');
      writeFileSync(file, JSON.stringify(records));
      assert.equal(withReply(stored, file)?.response, long);
      // A row written by the reference (or before this change) keeps its inline reply.
      assert.equal(withReply({ ...row, response: 'inline' }, file)?.response, 'inline');
    } finally {
      dir.cleanup();
    }
  });
});
