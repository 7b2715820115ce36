import assert from 'node:assert/strict';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, relative, sep } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';
import type { Scorer } from '../../../src/engine/scoring/scorers';
import { containWrites, writeJsonAtomic } from '../../../src/engine/store/atomic';
import { appendJsonl, readJsonl } from '../../../src/engine/store/jsonl';
import { RESULT_ROWS } from '../../../src/engine/store/runRows';
import { EVAL_FILE, predictionSegment, RUN_FILE } from '../../../src/engine/store/layout';
import { readRuntimeState } from '../../../src/engine/store/runSchemas';
import { conversationPath } from '../../../src/engine/store/predictionNames';
import { rollout } from '../../../src/engine/train/rollout';
import { fakeTarget, prepareSim, runSim, tempDir } from '../train/helpers';

/** Every file under `dir`, as paths relative to it. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const visit = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) visit(p);
      else out.push(relative(dir, p));
    }
  };
  visit(dir);
  return out.sort();
}

/** A target that echoes the task it was given, so each conversation file names its own task. */
const echo = fakeTarget((req) => `<answer>${String(req.messages.at(-1)?.content)}</answer>`);
const scorer: Scorer = { name: 'never', score: () => Promise.resolve({ hard: 0, soft: 0, reason: 'wrong' }) };

const HOSTILE_IDS = [
  '../../escape',
  '..',
  '.',
  '',
  '/etc/passwd',
  'a/b',
  'a_b',
  'a b',
  'a\\b',
  'a:b',
  'Q1',
  'q1',
  'ds_0001',
  'x'.repeat(200),
  `${'x'.repeat(200)}y`,
  'x'.repeat(120),
  'ümlaut/ø',
  'a_b~0123456789abcdef',
  predictionSegment('a b'),
  'nul\u0000byte',
  'line\nbreak',
  // Windows device names (any case, with or without an extension) and names it drops a trailing dot or space from.
  'CON',
  'nul',
  'Com1.json',
  'lpt9',
  'aux.txt',
  'CON.x y',
  'a.',
  'a',
  'a..',
  'b ',
  'b',
];

describe('paths derived from user data', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('skillopt-hostile-');
  });
  afterEach(() => tmp.cleanup());

  const run = (dir: string, ids: readonly string[]) =>
    rollout({
      items: ids.map((id) => ({ id, input: `task ${JSON.stringify(id)}`, answers: ['yes'], fields: {} })),
      skill: '# skill',
      dir,
      client: echo,
      scorer,
      stage: 'rollout',
      answerTag: 'answer',
      signal: new AbortController().signal,
    });

  it('gives hostile task ids one file each, all inside the evaluation folder, stable across a resume', async () => {
    const runDir = join(tmp.path, 'run');
    const dir = join(runDir, 'rollout');
    await run(dir, HOSTILE_IDS);
    // Nothing beside the run folder, and no file outside the evaluation folder.
    assert.deepEqual(readdirSync(tmp.path), ['run']);
    assert.deepEqual(readdirSync(runDir), ['rollout']);
    const conversations = filesUnder(dir).filter((f) => f.endsWith(EVAL_FILE.conversation));
    assert.equal(conversations.length, HOSTILE_IDS.length);
    // Distinct even on a case-insensitive disk that drops trailing dots and spaces (Windows).
    const folders = conversations.map((f) => f.split(sep)[1]!);
    assert.equal(new Set(folders.map((f) => f.toLowerCase().replace(/[. ]+$/, ''))).size, HOSTILE_IDS.length);
    // No folder is a Windows device name or ends in a dot.
    for (const f of folders) {
      assert.doesNotMatch(f, /^(con|prn|aux|nul|com\d|lpt\d)(\..*)?$/i, f);
      assert.doesNotMatch(f, /[. ]$/, f);
    }
    const paths = new Map(HOSTILE_IDS.map((id) => [id, conversationPath(dir, id)]));
    for (const [id, path] of paths) {
      assert.ok(path.startsWith(join(dir, EVAL_FILE.predictions) + '/'), path);
      const text = readFileSync(path, 'utf8');
      assert.ok(text.includes(JSON.stringify(`task ${JSON.stringify(id)}`).slice(1, -1)), `${id} → ${path}`);
    }
    // Ordinary ids keep the reference's folder names; the others are recorded.
    assert.ok(existsSync(join(dir, 'predictions', 'ds_0001', 'conversation.json')));
    assert.ok(existsSync(join(dir, 'predictions', 'a_b', 'conversation.json')));
    const recorded = JSON.parse(readFileSync(join(dir, EVAL_FILE.predictionNames), 'utf8')) as Record<
      string,
      string
    >;
    assert.equal(recorded.ds_0001, undefined);
    assert.ok(recorded['a b']?.startsWith('a_b~'));
    assert.ok(recorded.q1?.startsWith('q1~'), 'the case twin of Q1 gets its own folder');

    // A resumed evaluation (other order, one more id) keeps every name it gave.
    await run(dir, [...HOSTILE_IDS].reverse().concat('A_B'));
    for (const [id, path] of paths) assert.equal(conversationPath(dir, id), path);
    assert.notEqual(conversationPath(dir, 'A_B').toLowerCase(), paths.get('a_b')!.toLowerCase());
  });

  /** A simulated run stopped after step 1, and an empty folder beside it. */
  const stoppedAfterStep1 = async (): Promise<{ runDir: string; outside: string }> => {
    const runDir = join(tmp.path, 'run');
    const outside = join(tmp.path, 'outside');
    mkdirSync(outside);
    const first = await runSim(prepareSim(runDir), (e) => e.type === 'step/finished' && e.record.step === 1);
    assert.equal(first.outcome.status, 'stopped');
    return { runDir, outside };
  };

  it('refuses an env.name that would leave the run folder, naming the key', () => {
    const err = (() => {
      try {
        prepareSim(join(tmp.path, 'run'), ['env.name=../..', 'env.split_output_dir='], undefined);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    assert.ok(SkillOptError.is(err, 'config'), String(err));
    assert.match(err.message, /env\.name/);
    assert.match(err.message, /folder name/);
    assert.deepEqual(readdirSync(tmp.path), []);
  });

  it('refuses writes and appends through links planted in a run folder', () => {
    const runDir = join(tmp.path, 'run');
    const outside = join(tmp.path, 'outside');
    mkdirSync(runDir);
    mkdirSync(outside);
    writeFileSync(join(outside, 'ledger.jsonl'), '');
    symlinkSync(join(outside, 'ledger.jsonl'), join(runDir, 'ledger.jsonl'));
    symlinkSync(outside, join(runDir, 'steps'));
    const uncontain = containWrites(runDir);
    try {
      assert.throws(() => appendJsonl(join(runDir, 'ledger.jsonl'), { paid: 1 }), /symbolic link/);
      assert.throws(
        () => writeJsonAtomic(join(runDir, 'steps', 'step_0001', 'merged_patch.json'), {}),
        /leads out of the run folder/,
      );
      assert.throws(
        () => appendJsonl(join(runDir, 'steps', 'results.jsonl'), {}),
        /leads out of the run folder/,
      );
      // Ordinary writes still work.
      writeJsonAtomic(join(runDir, 'skills', 'skill_v0000.md'), 'ok');
    } finally {
      uncontain();
    }
    assert.equal(readFileSync(join(outside, 'ledger.jsonl'), 'utf8'), '');
    assert.deepEqual(readdirSync(outside), ['ledger.jsonl']);
  });

  it('refuses to read or replace run files through links out of the folder, and keeps the files behind them', async function () {
    this.timeout(60_000);
    const { runDir, outside } = await stoppedAfterStep1();
    for (const name of [RUN_FILE.ledger, RUN_FILE.history]) {
      // The file moved elsewhere and linked back: a resume must neither start it afresh nor write around it.
      renameSync(join(runDir, name), join(outside, name));
      symlinkSync(join(outside, name), join(runDir, name));
      const before = readFileSync(join(outside, name), 'utf8');
      await assert.rejects(
        runSim(prepareSim(runDir)),
        (err: unknown) =>
          SkillOptError.is(err, 'io') &&
          err.message.includes(`${join(runDir, name)} leads out of the run folder (a symbolic link)`) &&
          /move what the link .* points to into its place/.test(err.place.fix ?? ''),
      );
      assert.ok(lstatSync(join(runDir, name)).isSymbolicLink(), `${name} was replaced`);
      assert.equal(readFileSync(join(outside, name), 'utf8'), before, `${name} was changed`);
      rmSync(join(runDir, name));
      renameSync(join(outside, name), join(runDir, name));
    }
    // Put back, the run goes on.
    const resumed = await runSim(
      prepareSim(runDir),
      (e) => e.type === 'step/finished' && e.record.step === 2,
    );
    assert.equal(resumed.outcome.status, 'stopped');
  });

  it('refuses reading, replacing and appending to a run file through a link out of a contained folder', () => {
    const runDir = join(tmp.path, 'run');
    const outside = join(tmp.path, 'outside');
    mkdirSync(runDir);
    mkdirSync(outside);
    writeFileSync(join(outside, 'state.json'), '{}');
    symlinkSync(join(outside, 'state.json'), join(runDir, RUN_FILE.state));
    symlinkSync(join(outside, 'missing.jsonl'), join(runDir, 'results.jsonl'));
    const uncontain = containWrites(runDir);
    try {
      assert.throws(() => readRuntimeState(join(runDir, RUN_FILE.state)), /leads out of the run folder/);
      assert.throws(() => writeJsonAtomic(join(runDir, RUN_FILE.state), {}), /leads out of the run folder/);
      assert.throws(
        () => readJsonl(join(runDir, 'results.jsonl'), RESULT_ROWS),
        /leads out of the run folder/,
      );
      assert.throws(() => appendJsonl(join(runDir, 'results.jsonl'), {}), /leads out of the run folder/);
    } finally {
      uncontain();
    }
    assert.equal(readFileSync(join(outside, 'state.json'), 'utf8'), '{}');
    assert.deepEqual(readdirSync(outside), ['state.json']);
  });

  it('a resumed run with a link planted in its folder stops without writing outside it', async function () {
    this.timeout(60_000);
    const { runDir, outside } = await stoppedAfterStep1();
    symlinkSync(outside, join(runDir, 'steps', 'step_0002'));
    await assert.rejects(runSim(prepareSim(runDir)), /leads out of the run folder/);
    assert.deepEqual(readdirSync(outside), []);
  });
});
