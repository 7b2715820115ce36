import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';
import { prepareRun } from '../../../src/engine/run';
import { exampleConfig, prepareSim, tempDir } from '../train/helpers';

/** Combinations that cannot work are refused before anything is spent, naming the key and the fix. */
describe('activation: the plan refuses bad combinations before spending', () => {
  let tmp: ReturnType<typeof tempDir>;
  let triggers: string;
  beforeEach(() => {
    tmp = tempDir('skillopt-actplan-');
    triggers = join(tmp.path, 'triggers.json');
    writeFileSync(
      triggers,
      JSON.stringify([
        { query: 'format the date', should_trigger: true },
        { query: 'format the name', should_trigger: true },
        { query: 'write a poem', should_trigger: false },
        { query: 'explain recursion', should_trigger: false },
      ]),
    );
  });
  afterEach(() => tmp.cleanup());

  const refused = (overrides: string[], key: string, message: RegExp): void => {
    assert.throws(
      () =>
        prepareRun({
          configPath: exampleConfig,
          outDir: join(tmp.path, 'run'),
          overrides: ['cache.enabled=false', ...overrides],
          models: { trustedWorkspace: true },
        }),
      (e: unknown) =>
        e instanceof SkillOptError &&
        e.place.key === key &&
        message.test(e.message) &&
        /Fix: /.test(e.message),
    );
  };

  it('refuses a track without trigger queries', () => {
    refused(['activation.enabled=true'], 'activation.trigger_file', /no trigger queries/);
  });

  it('refuses a custom target command, which cannot say whether it loaded the skill', () => {
    refused(
      [
        'activation.enabled=true',
        `activation.trigger_file=${triggers}`,
        'model.target_backend=command',
        'model.target_command=echo {prompt}',
      ],
      'activation.enabled',
      /custom target command/,
    );
  });

  it('refuses a description limit above the host budget, and a split that leaves one side empty', () => {
    refused(
      ['activation.enabled=true', `activation.trigger_file=${triggers}`, 'activation.host_budget_chars=100'],
      'activation.max_description_chars',
      /above host_budget_chars/,
    );
    writeFileSync(triggers, JSON.stringify([{ query: 'format the date', should_trigger: true }]));
    refused(
      ['activation.enabled=true', `activation.trigger_file=${triggers}`],
      'activation.train_share',
      /0 train \/ 1 held out/,
    );
  });

  it('says why the skill has no description to train: none, empty, not text, bad YAML, no front matter', () => {
    const cases: [string, RegExp][] = [
      ['---\nname: house-style\n---\n# S\n', /: its front matter has no description key/],
      ['---\nname: house-style\ndescription: >-\n---\n# S\n', /: its description is empty/],
      ['---\nname: house-style\ndescription: 42\n---\n# S\n', /: its description is not text \(number\)/],
      ['---\nname: house-style\ndescription:\n  - a\n---\n# S\n', /: its description is not text \(a list\)/],
      ['---\ndescription: a\ndescription: b\n---\n# S\n', /: its front matter is not valid YAML \(line 3: /],
      ['# S\n', /: SKILL.md does not start with a --- front-matter block/],
    ];
    for (const [skill, message] of cases) {
      const file = join(tmp.path, 'SKILL.md');
      writeFileSync(file, skill);
      refused(
        ['activation.enabled=true', `activation.trigger_file=${triggers}`, `env.skill_init=${file}`],
        'activation.enabled',
        message,
      );
    }
  });

  it('refuses a limit above 1,024 characters in the config itself', () => {
    assert.throws(
      () => prepareSim(join(tmp.path, 'run'), ['activation.max_description_chars=2000']),
      (e: unknown) => e instanceof Error && /max_description_chars/.test(e.message) && /1024/.test(e.message),
    );
  });

  it('says so when trigger queries are given but the track is off', () => {
    const prepared = prepareSim(join(tmp.path, 'run'), [`activation.trigger_file=${triggers}`]);
    assert.equal(prepared.activation, undefined);
    assert.ok(prepared.warnings.some((w) => /activation\.enabled is false/.test(w)));
  });
});

describe('activation: trigger queries from the tasks', () => {
  it('takes every row with should_trigger of a ratio split, none of them a body task', () => {
    const tmp = tempDir('skillopt-acttasks-');
    try {
      const lines = Array.from({ length: 30 }, (_, i) =>
        JSON.stringify({
          id: `t${i}`,
          question: `Rewrite the date ${i} for the staff directory`,
          answer: 'x',
          ...(i % 3 === 0 ? { should_trigger: i % 2 === 0 } : {}),
        }),
      );
      writeFileSync(join(tmp.path, 'tasks.jsonl'), lines.join('\n') + '\n');
      const prepared = prepareSim(join(tmp.path, 'run'), [
        'activation.enabled=true',
        `env.data_path=${join(tmp.path, 'tasks.jsonl')}`,
      ]);
      const { train, heldOut } = prepared.activation!.split;
      const ids = [...train, ...heldOut].map((q) => q.id).sort();
      assert.deepEqual(ids, Array.from({ length: 10 }, (_, i) => `t${i * 3}`).sort());
      const body = [
        ...prepared.splits.train,
        ...prepared.splits.val,
        ...prepared.splits.test.unsealForEvaluation(),
      ];
      assert.equal(body.length, 20);
      assert.ok(body.every((t) => !ids.includes(t.id)));
      assert.ok(prepared.warnings.some((w) => /from 10 task rows with should_trigger/.test(w)));
    } finally {
      tmp.cleanup();
    }
  });

  it("leaves a split folder's test/ trigger rows sealed, and says so", () => {
    const tmp = tempDir('skillopt-actdir-');
    try {
      const row = (id: string, extra: Record<string, unknown> = {}): string =>
        JSON.stringify({
          id,
          question: `Rewrite the date ${id} for the staff directory`,
          answer: 'x',
          ...extra,
        });
      const files: Record<string, string[]> = {
        train: ['a1', 'a2', 'a3']
          .map((id) => row(id))
          .concat(row('q1', { should_trigger: true }), row('q2', { should_trigger: false })),
        val: [row('b1'), row('q3', { should_trigger: true }), row('q4', { should_trigger: false })],
        test: [row('c1'), row('q5', { should_trigger: true })],
      };
      for (const [name, lines] of Object.entries(files)) {
        mkdirSync(join(tmp.path, 'splits', name), { recursive: true });
        writeFileSync(join(tmp.path, 'splits', name, 'items.jsonl'), lines.join('\n') + '\n');
      }
      const prepared = prepareSim(join(tmp.path, 'run'), [
        'activation.enabled=true',
        'env.split_mode=split_dir',
        `env.split_dir=${join(tmp.path, 'splits')}`,
      ]);
      const { train, heldOut } = prepared.activation!.split;
      assert.deepEqual([...train, ...heldOut].map((q) => q.id).sort(), ['q1', 'q2', 'q3', 'q4']);
      assert.deepEqual(
        prepared.splits.test.unsealForEvaluation().map((t) => t.id),
        ['c1'],
      );
      assert.ok(
        prepared.warnings.some((w) =>
          w.includes('1 row with should_trigger in the test split folder is not a trigger query'),
        ),
      );
    } finally {
      tmp.cleanup();
    }
  });
});
