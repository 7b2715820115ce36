import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';
import { prepareRun } from '../../../src/engine/run';
import { LOAD_SKILL_TOOL } from '../../../src/engine/prompts/activation';
import type { ActivationRecord, RolloutResult } from '../../../src/protocol/records';
import { listedDescription } from '../../support/loopback/agentModel';
import {
  openAiPromptText,
  startOpenAiServer,
  type LoopbackServer,
} from '../../support/loopback/openaiServer';
import {
  scriptedModels,
  scriptedTargetModel,
  scriptedWireOverrides,
} from '../../support/loopback/scriptedModels';
import { exampleConfig, prepareSim, runSim, tempDir } from '../train/helpers';

/**
 * Task rows with `should_trigger` are the activation track's trigger queries: they need no expected
 * answer (skill-creator's trigger queries have none) and never become body tasks, so a
 * should-not-trigger query cannot drive the body gate.
 */
const EXAMPLE_TASKS = join(__dirname, '..', '..', '..', 'examples', 'house-style', 'tasks.jsonl');
const TRIGGERS = [
  { query: 'Rewrite the date March 3 for the staff directory', should_trigger: true },
  { query: 'Spell the employee name for the staff directory', should_trigger: true },
  { query: 'Put the invoice total in dollars for the staff directory', should_trigger: true },
  { query: 'Rewrite this hire date for the staff directory', should_trigger: true },
  { query: 'Write a haiku about autumn leaves', should_trigger: false },
  { query: 'Explain recursion in Python', should_trigger: false },
  { query: 'Translate hello into Spanish', should_trigger: false },
];
const TRIGGER_IDS = TRIGGERS.map((_, i) => `trig${i}`);

/** The first `n` example tasks, then the trigger rows (ids trigN, no answer). */
function writeTasks(path: string, n: number, triggerFields: Record<string, unknown> = {}): void {
  const body = readFileSync(EXAMPLE_TASKS, 'utf8').split('\n').filter(Boolean).slice(0, n);
  const rows = TRIGGERS.map((t, i) => JSON.stringify({ id: `trig${i}`, ...t, ...triggerFields }));
  writeFileSync(path, [...body, ...rows].join('\n') + '\n');
}

/** Every file under `dir`, relative, with / separators. */
function walk(dir: string, base = dir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path, base) : [relative(base, path).split(sep).join('/')];
  });
}

describe('activation: task rows with should_trigger', function () {
  this.timeout(180_000);

  describe('train over the OpenAI wire (real SDK, loopback)', () => {
    let server: LoopbackServer | undefined;
    let tmp: ReturnType<typeof tempDir>;
    before(async () => {
      tmp = tempDir('skillopt-trigrows-wire-');
      const tasks = join(tmp.path, 'probe.jsonl');
      writeTasks(tasks, 24, { answer: 'x' });
      const probe = prepareRun({
        configPath: exampleConfig,
        outDir: join(tmp.path, 'probe'),
        dryRun: true,
        overrides: ['cache.enabled=false', `env.data_path=${tasks}`],
      });
      const body = [...probe.splits.train, ...probe.splits.val, ...probe.splits.test.unsealForEvaluation()];
      // The target loads the skill when the listed description shares a long word with the request.
      server = await startOpenAiServer(
        scriptedModels(body, (req, stage) => {
          const text = openAiPromptText(req);
          if (stage !== 'target' || !text.includes('<available_skills>')) return undefined;
          const description = listedDescription(text, 'house-style') ?? '';
          const query = TRIGGERS.find((t) => text.includes(t.query))?.query ?? '';
          const words = (s: string): string[] => s.toLowerCase().match(/[a-z]{5,}/g) ?? [];
          return words(query).some((w) => words(description).includes(w))
            ? { kind: 'reply', toolCalls: [{ name: LOAD_SKILL_TOOL, input: { name: 'house-style' } }] }
            : { kind: 'reply', text: 'A direct answer.' };
        }),
      );
    });
    after(async () => {
      if (server) await server.close();
      tmp.cleanup();
    });

    for (const answered of [false, true])
      it(`trains the description on rows ${answered ? 'with' : 'without'} answers, and no trigger row reaches a body rollout`, async () => {
        const wire = server!;
        const out = join(tmp.path, answered ? 'run-answered' : 'run');
        const tasks = join(tmp.path, answered ? 'answered.jsonl' : 'tasks.jsonl');
        writeTasks(tasks, 24, answered ? { answer: 'x' } : {});
        const prepared = prepareRun({
          configPath: exampleConfig,
          outDir: out,
          overrides: [
            'cache.enabled=false',
            ...scriptedWireOverrides(wire.url),
            `env.data_path=${tasks}`,
            'train.num_epochs=1',
            'activation.enabled=true',
            'activation.repeats=1',
          ],
          models: { keys: { openai: 'fake-trigger-rows-key' }, env: {} },
        });
        assert.equal(prepared.models.simulated, false);
        const body = [
          ...prepared.splits.train,
          ...prepared.splits.val,
          ...prepared.splits.test.unsealForEvaluation(),
        ];
        assert.equal(body.length, 24, 'the body splits hold the body tasks only');
        assert.ok(body.every((t) => !TRIGGER_IDS.includes(t.id)));
        const { train, heldOut } = prepared.activation!.split;
        assert.deepEqual([...train, ...heldOut].map((q) => q.id).sort(), [...TRIGGER_IDS].sort());

        const { outcome } = await runSim(prepared);
        assert.equal(outcome.status, 'finished');
        const history = JSON.parse(
          readFileSync(join(out, 'activation_history.json'), 'utf8'),
        ) as ActivationRecord[];
        assert.equal(history.length, 1, 'the activation track ran');
        assert.ok(!history[0].simulated, 'real models, not simulated');
        assert.equal(typeof history[0].held_out_before.rate, 'number');
        // The trigger queries went over the wire with the listing; body rollouts never saw them.
        const withListing = wire.requests.filter((r) => openAiPromptText(r).includes('<available_skills>'));
        assert.ok(withListing.length >= TRIGGERS.length);
        // Body rollouts: target calls without the listing (the optimizer's describe call shows train queries).
        const plain = wire.requests.filter(
          (r) =>
            (r.body as { model?: string }).model === scriptedTargetModel &&
            !openAiPromptText(r).includes('<available_skills>'),
        );
        assert.ok(plain.length > 0);
        for (const t of TRIGGERS)
          assert.ok(
            plain.every((r) => !openAiPromptText(r).includes(t.query)),
            `"${t.query}" reached a body call`,
          );

        const files = walk(out).filter((f) => !f.startsWith('activation/'));
        const results = files.filter((f) => f.endsWith('results.jsonl'));
        for (const prefix of ['steps/', 'selection_eval_baseline/', 'test_eval'])
          assert.ok(
            results.some((f) => f.startsWith(prefix)),
            `a ${prefix} results.jsonl exists (${results.join(', ')})`,
          );
        for (const f of results) {
          const ids = readFileSync(join(out, f), 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => (JSON.parse(l) as RolloutResult).id);
          assert.ok(ids.length > 0);
          for (const id of TRIGGER_IDS) assert.ok(!ids.includes(id), `${id} is in ${f}`);
        }
        for (const f of files)
          for (const id of TRIGGER_IDS)
            assert.ok(!f.split('/').includes(id), `${f} is a body file of trigger row ${id}`);
        for (const split of ['train', 'val', 'test']) {
          const written = readFileSync(join(prepared.splits.files[split as 'train']), 'utf8');
          for (const id of TRIGGER_IDS) assert.ok(!written.includes(`"${id}"`), `${id} in ${split} items`);
        }
      });
  });

  it('keeps trigger rows with answers out of the body splits too, and says so when the track is off', () => {
    const tmp = tempDir('skillopt-trigrows-off-');
    try {
      const tasks = join(tmp.path, 'tasks.jsonl');
      writeTasks(tasks, 24, { answer: 'x' });
      const prepared = prepareSim(join(tmp.path, 'run'), [`env.data_path=${tasks}`]);
      const body = [
        ...prepared.splits.train,
        ...prepared.splits.val,
        ...prepared.splits.test.unsealForEvaluation(),
      ];
      assert.equal(body.length, 24);
      assert.ok(body.every((t) => !TRIGGER_IDS.includes(t.id)));
      assert.ok(
        prepared.warnings.some((w) =>
          /activation\.enabled is false: the 7 task rows with should_trigger \(trigger queries, never body tasks\) are not used/.test(
            w,
          ),
        ),
        prepared.warnings.join('\n'),
      );
      // The body split is the same as that of the file without the trigger rows.
      writeTasks(join(tmp.path, 'plain.jsonl'), 24);
      const onlyBody = readFileSync(join(tmp.path, 'plain.jsonl'), 'utf8').split('\n').slice(0, 24);
      writeFileSync(join(tmp.path, 'plain.jsonl'), onlyBody.join('\n') + '\n');
      const same = prepareSim(join(tmp.path, 'run2'), [`env.data_path=${join(tmp.path, 'plain.jsonl')}`]);
      assert.deepEqual(
        prepared.splits.train.map((t) => t.id),
        same.splits.train.map((t) => t.id),
      );
    } finally {
      tmp.cleanup();
    }
  });

  it('names a split folder whose split holds only trigger rows, and a task file with no body task', () => {
    const tmp = tempDir('skillopt-trigrows-empty-');
    try {
      const body = readFileSync(EXAMPLE_TASKS, 'utf8').split('\n').filter(Boolean);
      const triggers = TRIGGERS.map((t, i) => JSON.stringify({ id: `trig${i}`, ...t }));
      const folder = join(tmp.path, 'splits');
      for (const [name, lines] of [
        ['train', triggers],
        ['val', body.slice(0, 3)],
        ['test', body.slice(3, 6)],
      ] as const) {
        mkdirSync(join(folder, name), { recursive: true });
        writeFileSync(join(folder, name, 'items.jsonl'), lines.join('\n') + '\n');
      }
      assert.throws(
        () =>
          prepareSim(join(tmp.path, 'run'), [
            'env.split_mode=split_dir',
            `env.split_dir=${folder}`,
            'activation.enabled=true',
          ]),
        (e: unknown) =>
          SkillOptError.is(e, 'tasks') &&
          /The train split holds only trigger queries \(7 rows with should_trigger/.test(e.message) &&
          e.place.file === join(folder, 'train', 'items.jsonl') &&
          /add body tasks/.test(e.message),
      );
      const only = join(tmp.path, 'only.jsonl');
      writeFileSync(only, triggers.join('\n') + '\n');
      assert.throws(
        () => prepareSim(join(tmp.path, 'run2'), [`env.data_path=${only}`, 'activation.enabled=true']),
        (e: unknown) =>
          SkillOptError.is(e, 'tasks') &&
          /The train split is empty/.test(e.message) &&
          /the file has no body tasks \(7 rows with should_trigger are the activation track's trigger queries/.test(
            e.message,
          ),
      );
      // A should_trigger that is not true or false is refused where it is written.
      writeFileSync(
        only,
        [...body.slice(0, 10), JSON.stringify({ id: 'odd', query: 'q', should_trigger: 'yes' })].join('\n'),
      );
      assert.throws(
        () => prepareSim(join(tmp.path, 'run3'), [`env.data_path=${only}`]),
        (e: unknown) =>
          SkillOptError.is(e, 'tasks') &&
          /Task "odd" has should_trigger "yes"/.test(e.message) &&
          e.place.line === 11,
      );
    } finally {
      tmp.cleanup();
    }
  });
});
