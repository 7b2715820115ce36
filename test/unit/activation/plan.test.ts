import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
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
  it('takes the train and selection tasks that carry should_trigger, never the test split', () => {
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
      const visible = [...prepared.splits.train, ...prepared.splits.val]
        .filter((t) => typeof t.fields.should_trigger === 'boolean')
        .map((t) => t.id)
        .sort();
      assert.deepEqual(ids, visible);
      const sealed = new Set(prepared.splits.test.unsealForEvaluation().map((t) => t.id));
      assert.ok(ids.every((id) => !sealed.has(id)));
      assert.ok(prepared.warnings.some((w) => /tasks with should_trigger \(train and selection/.test(w)));
      const inTest = prepared.splits.test
        .unsealForEvaluation()
        .filter((t) => typeof t.fields.should_trigger === 'boolean').length;
      assert.ok(inTest > 0, 'the fixture puts some in the test split');
      assert.ok(
        prepared.warnings.some((w) =>
          w.includes(`${inTest} tasks with should_trigger are in the test split`),
        ),
      );
      // A value that is not true or false is refused, naming the task.
      lines[3] = JSON.stringify({ id: 't3', question: 'q', answer: 'x', should_trigger: 'yes' });
      writeFileSync(join(tmp.path, 'tasks.jsonl'), lines.join('\n') + '\n');
      assert.throws(
        () =>
          prepareSim(join(tmp.path, 'run2'), [
            'activation.enabled=true',
            `env.data_path=${join(tmp.path, 'tasks.jsonl')}`,
          ]),
        (e: unknown) => e instanceof SkillOptError && /task "t3" has should_trigger "yes"/.test(e.message),
      );
    } finally {
      tmp.cleanup();
    }
  });
});
