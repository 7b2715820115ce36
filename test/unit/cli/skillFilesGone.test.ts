import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_DIR, RUN_FILE } from '../../../src/engine/store/layout';
import { cliInProcess as cli } from '../../support/cliInProcess';
import { tempDir } from '../train/helpers';

const example = join(__dirname, '..', '..', '..', 'examples', 'house-style');

/**
 * A run reads back the skills it saved (the initial copy, the current one, the best) to go on: one
 * of them deleted or replaced by a folder is one message naming it, before anything is spent.
 */
describe('resume with a saved skill gone: one message naming the file, no stack trace', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  let run: string;
  let argv: string[];
  before(async () => {
    tmp = tempDir('skillopt-skillgone-');
    const d = join(tmp.path, 'cfg');
    cpSync(example, d, { recursive: true });
    run = join(tmp.path, 'run');
    argv = ['train', join(d, 'skillopt.yaml'), '--out', run, '--cfg-options', 'train.num_epochs=1'];
    const first = await cli(argv);
    assert.equal(first.code, 0, first.stderr);
  });
  after(() => tmp.cleanup());

  /** The ledger's call rows (its session rows mark each process that opened the run). */
  const calls = (): number =>
    readFileSync(join(run, RUN_FILE.ledger), 'utf8')
      .split('\n')
      .filter((l) => l && !l.includes('"kind":"session"')).length;
  const state = (): { last_completed_step: number } =>
    JSON.parse(readFileSync(join(run, RUN_FILE.state), 'utf8')) as { last_completed_step: number };
  const files: Array<[string, () => string]> = [
    ['the initial copy', () => join(RUN_DIR.skills, 'skill_v0000.md')],
    [
      'the current skill',
      () => join(RUN_DIR.skills, `skill_v${String(state().last_completed_step).padStart(4, '0')}.md`),
    ],
    ['the best skill', () => RUN_FILE.bestSkill],
  ];
  for (const [what, name] of files) {
    for (const how of ['deleted', 'a folder'] as const) {
      it(`${what} ${how}`, async () => {
        const file = join(run, name());
        const text = readFileSync(file, 'utf8');
        rmSync(file);
        if (how === 'a folder') mkdirSync(file);
        try {
          const paid = calls();
          const r = await cli([...argv, '--resume']);
          const all = r.stdout + r.stderr;
          assert.equal(r.code, 1, all);
          assert.doesNotMatch(all, /^\s+at .+[:(]\d+/m, `stack trace in\n${all}`);
          const messages = r.stderr.split('\n').filter((l) => l.startsWith('skillopt: '));
          assert.equal(messages.length, 1, all);
          assert.ok(messages[0]!.startsWith(`skillopt: ${file}: `), all);
          assert.match(messages[0]!, how === 'deleted' ? /is missing/ : /cannot be read \(EISDIR\)/);
          assert.match(messages[0]!, /Fix: restore the file .*--fresh/);
          assert.equal(calls(), paid, 'the resume made calls');
        } finally {
          rmSync(file, { recursive: true, force: true });
          writeFileSync(file, text);
        }
      });
    }
  }
});
