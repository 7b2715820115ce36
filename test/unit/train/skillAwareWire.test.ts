import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { prepareRun } from '../../../src/engine/run';
import { LAPSE_HEADING } from '../../../src/engine/prompts/skillAware';
import { extractAppendixNotes } from '../../../src/engine/skill/document';
import type { RawPatch } from '../../../src/engine/train/reflect';
import type { StepRecord } from '../../../src/protocol/records';
import {
  openAiMessages,
  reply,
  startOpenAiServer,
  type LoopbackServer,
} from '../../support/loopback/openaiServer';
import { contentText, type RecordedRequest } from '../../support/loopback/core';
import {
  scriptedModels,
  scriptedOptimizerModel,
  scriptedWireOverrides,
} from '../../support/loopback/scriptedModels';
import { exampleConfig, prepareSim, read, readJson, runSim, tempDir } from './helpers';

const ON = ['optimizer.use_skill_aware_reflection=true', 'optimizer.skill_aware_consolidate_threshold=1'];

const text = (req: RecordedRequest, role: string): string =>
  openAiMessages(req)
    .filter((m) => m.role === role)
    .map((m) => contentText(m.content))
    .join('\n');

/** What each step decided and did to the appendix. */
const appendixTrail = (out: string): string[] =>
  readJson<StepRecord[]>(out, 'history.json').map((r) =>
    [
      r.step,
      r.action,
      r.n_execution_lapse_notes ?? '-',
      r.n_appendix_notes_added ?? '-',
      r.n_appendix_notes_total ?? '-',
      r.n_appendix_notes_consolidated ?? '-',
    ].join(':'),
  );

/**
 * Skill-aware reflection through the real `openai` SDK against the loopback server: the analyst
 * prompt asks for execution-lapse notes, the `appendix_notes` replies (with a patch, or alone) reach
 * the appendix, and the consolidation call's reply is kept only when it is shorter.
 */
describe('skill-aware reflection over the OpenAI wire format (loopback)', function () {
  this.timeout(180_000);
  const dirs: Array<{ cleanup: () => void }> = [];
  const dir = (prefix: string): string => {
    const d = tempDir(prefix);
    dirs.push(d);
    return d.path;
  };
  let tasks: Parameters<typeof scriptedModels>[0];

  before(() => {
    const probe = prepareRun({ configPath: exampleConfig, outDir: dir('skillopt-saw-probe-'), dryRun: true });
    tasks = [...probe.splits.train, ...probe.splits.val, ...probe.splits.test.unsealForEvaluation()];
  });
  after(() => {
    for (const d of dirs) d.cleanup();
  });

  async function overWire(server: LoopbackServer): Promise<string> {
    const out = dir('skillopt-saw-');
    const prepared = prepareRun({
      configPath: exampleConfig,
      outDir: out,
      overrides: [...ON, 'cache.enabled=false', ...scriptedWireOverrides(server.url)],
    });
    assert.equal((await runSim(prepared)).outcome.status, 'finished');
    return out;
  }

  it('sends the lapse section and the consolidation prompt, and decides as the offline run does', async () => {
    const server = await startOpenAiServer(scriptedModels(tasks));
    try {
      const out = await overWire(server);
      const offline = dir('skillopt-saw-sim-');
      await runSim(prepareSim(offline, ON));
      assert.deepEqual(appendixTrail(out), appendixTrail(offline));

      const optimizer = server.requests.filter(
        (r) => (r.body as { model?: string }).model === scriptedOptimizerModel,
      );
      const analysts = optimizer.filter((r) => /Failed Trajectories/.test(text(r, 'user')));
      assert.ok(analysts.length > 0);
      for (const a of analysts) {
        assert.ok(text(a, 'system').includes(LAPSE_HEADING));
        assert.match(text(a, 'system'), /"appendix_notes": \[/);
      }
      const consolidations = optimizer.filter((r) => /^## Execution Notes \(\d+\)$/m.test(text(r, 'user')));
      const consolidated = readJson<StepRecord[]>(out, 'history.json').filter(
        (r) => r.n_appendix_notes_consolidated !== undefined,
      );
      assert.ok(consolidated.length > 0);
      assert.equal(consolidations.length, consolidated.length);
      assert.match(text(consolidations[0], 'system'), /execution-notes appendix/);
      assert.match(text(consolidations[0], 'user'), /^1\. .+\n2\. .+/m);
    } finally {
      await server.close();
    }
  });

  it('keeps a lapse-only reply as an empty patch with its notes, and an unshortened consolidation is not applied', async () => {
    let firstFailureAnalyst = true;
    const server = await startOpenAiServer(
      scriptedModels(tasks, (req, stage) => {
        if (stage === 'appendix_consolidate') {
          // Echo the notes: not shorter, so the appendix stays as merged.
          const notes = [...text(req, 'user').matchAll(/^\d+\. (.*)$/gm)].map((m) => m[1]);
          return reply(JSON.stringify({ appendix_notes: notes }));
        }
        if (stage === 'analyst' && firstFailureAnalyst && /Failed Trajectories/.test(text(req, 'user'))) {
          firstFailureAnalyst = false;
          return reply(
            JSON.stringify({ batch_size: 4, appendix_notes: [{ note: 'Apply the existing format rules.' }] }),
          );
        }
        return undefined;
      }),
    );
    try {
      const out = await overWire(server);
      const patches = join(out, 'steps', 'step_0001', 'patches');
      const file = readdirSync(patches).find((f) => f.startsWith('minibatch_fail_'));
      assert.ok(file);
      const raw = readJson<RawPatch>(patches, file);
      assert.deepEqual(raw.patch, { reasoning: 'execution-lapse only', edits: [] });
      assert.deepEqual(raw.appendix_notes, ['Apply the existing format rules.']);
      const history = readJson<StepRecord[]>(out, 'history.json');
      assert.ok(history.every((r) => r.n_appendix_notes_consolidated === undefined));
      assert.equal(history[0].n_appendix_notes_added, 1);
      assert.deepEqual(extractAppendixNotes(read(out, 'skills', 'skill_v0001.md')), [
        'Apply the existing format rules.',
      ]);
      // Nothing shortened it, so the appendix only grows: every note is kept.
      const totals = history.flatMap((r) =>
        r.n_appendix_notes_total === undefined ? [] : [r.n_appendix_notes_total],
      );
      assert.deepEqual(
        totals,
        [...totals].sort((a, b) => a - b),
      );
    } finally {
      await server.close();
    }
  });
});
