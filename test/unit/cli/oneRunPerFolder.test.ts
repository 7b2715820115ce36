import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUN_DIR, RUN_FILE } from '../../../src/engine/store/layout';
import type { EngineEvent } from '../../../src/protocol/events';
import { cliEntry as entry, cliProcess } from '../../support/cliProcess';

const root = join(__dirname, '..', '..', '..');
const example = join(root, 'examples', 'house-style');
function cli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { code: number | null; out: string; stdout: string } {
  const r = cliProcess(args, { env: { ...process.env, ...env } });
  return { code: r.code, out: r.stdout + r.stderr, stdout: r.stdout };
}

/** One live process per run folder, and a run folder belongs to the config it was started with. */
describe('one run per folder (CLI processes)', function () {
  this.timeout(90_000);
  let dir: string;
  let out: string;
  let config: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-onerun-'));
    cpSync(example, dir, { recursive: true });
    out = join(dir, 'run');
    config = join(dir, 'skillopt.yaml');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** `skillopt train` of the example into the run folder: one epoch, cache off, plus `extra` options. */
  const train = (flags: string[] = [], extra: string[] = []): ReturnType<typeof cli> =>
    cli([
      'train',
      config,
      '--out',
      out,
      ...flags,
      '--cfg-options',
      'train.num_epochs=1',
      'cache.enabled=false',
      ...extra,
    ]);

  /**
   * The finished run in `out` cut back to what a kill before its first save (during the baseline
   * or step 1) leaves: the config, the ledger, the data digest, the splits and skills/skill_v0000.md.
   */
  const killedBeforeFirstSave = (): void => {
    const kept = new Set<string>([
      RUN_FILE.config,
      RUN_FILE.ledger,
      RUN_FILE.dataDigest,
      RUN_DIR.generatedSplits,
      RUN_DIR.skills,
    ]);
    for (const name of readdirSync(out)) if (!kept.has(name)) rmSync(join(out, name), { recursive: true });
    const skills = join(out, RUN_DIR.skills);
    for (const name of readdirSync(skills)) if (name !== 'skill_v0000.md') rmSync(join(skills, name));
  };

  it('refuses a second process on a folder a live run holds, naming the holder', async () => {
    // A slow simulated run holds the folder while the second and third start: 5 s a reply keeps it alive
    // for over a minute (16 waves), however slowly a loaded machine starts the other two processes.
    const first = spawn(
      process.execPath,
      [...entry, 'train', config, '--out', out, '--cfg-options', 'cache.enabled=false'],
      {
        cwd: root,
        env: { ...process.env, NO_COLOR: '1', SKILLOPT_SIM_LATENCY_MS: '5000' },
      },
    );
    const closed = new Promise<number | null>((resolve) => first.on('close', resolve));
    try {
      const lock = join(out, RUN_FILE.lock);
      for (let i = 0; i < 200 && !existsSync(lock); i++) await new Promise((r) => setTimeout(r, 100));
      assert.ok(existsSync(lock), 'the first run never took the lock');
      const second = cli(['train', config, '--out', out, '--cfg-options', 'cache.enabled=false']);
      assert.equal(second.code, 1, second.out);
      assert.match(second.out, new RegExp(`in use by another SkillOpt process \\(pid ${first.pid}`));
      assert.doesNotMatch(second.out, /\n\s+at /, 'a stack trace was printed');
      // --fresh deletes a run: never one another process is writing.
      const fresh = cli(['train', config, '--out', out, '--fresh', '--cfg-options', 'cache.enabled=false']);
      assert.equal(fresh.code, 1, fresh.out);
      assert.match(fresh.out, new RegExp(`in use by another SkillOpt process \\(pid ${first.pid}`));
      assert.doesNotMatch(fresh.out, /\n\s+at /, 'a stack trace was printed');
      assert.ok(existsSync(join(out, RUN_FILE.dataDigest)), '--fresh deleted the live run');
    } finally {
      first.kill('SIGKILL');
      await closed;
    }
    // The killed run left its lock behind: it is stale, and a resume takes it over.
    assert.ok(existsSync(join(out, RUN_FILE.lock)));
    const resumed = cli(['train', config, '--out', out, '--resume', '--cfg-options', 'cache.enabled=false']);
    assert.equal(resumed.code, 0, resumed.out);
    assert.ok(!existsSync(join(out, RUN_FILE.lock)), 'the lock outlived its run');
  });

  it('refuses to resume a folder under a different config, and --fresh starts it over', () => {
    const first = train([]);
    assert.equal(first.code, 0, first.out);
    const history = readFileSync(join(out, RUN_FILE.history), 'utf8');
    const other = train([], ['train.seed=7']);
    assert.equal(other.code, 1, other.out);
    assert.match(other.out, /started with a different config \(seed: 42 → 7\)/);
    assert.match(other.out, /--fresh/);
    // Refused before the call estimate or any notice is printed (stdout stays empty).
    assert.equal(other.stdout, '', 'printed before it refused');
    assert.equal(
      readFileSync(join(out, RUN_FILE.history), 'utf8'),
      history,
      'the refused run changed the folder',
    );
    assert.equal(JSON.parse(readFileSync(join(out, RUN_FILE.config), 'utf8')).seed, 42);
    // Caps and concurrency may change between sessions.
    const capped = train(
      [],
      [
        'limits.max_dollars=5',
        'limits.agent_concurrency=2',
        'speed.speculate=true',
        'evaluation.early_stop=true',
      ],
    );
    assert.equal(capped.code, 0, capped.out);
    // A --fresh whose config is refused deletes nothing.
    const kept = readFileSync(join(out, RUN_FILE.history), 'utf8');
    const typo = train(['--fresh'], ['train.num_epochs=two']);
    assert.equal(typo.code, 1, typo.out);
    assert.match(typo.out, /train\.num_epochs/);
    assert.equal(readFileSync(join(out, RUN_FILE.history), 'utf8'), kept, '--fresh deleted the run');
    const fresh = train(['--fresh'], ['train.seed=7']);
    assert.equal(fresh.code, 0, fresh.out);
    assert.equal(JSON.parse(readFileSync(join(out, RUN_FILE.config), 'utf8')).seed, 7);
  });

  it('--fresh deletes only what the run wrote: files put into the run folder stay, named', () => {
    assert.equal(train().code, 0);
    writeFileSync(join(out, 'notes.txt'), 'mine');
    writeFileSync(join(out, 'SKILL.md'), 'mine');
    const again = train(['--fresh']);
    assert.equal(again.code, 0, again.out);
    assert.equal(readFileSync(join(out, 'notes.txt'), 'utf8'), 'mine');
    assert.equal(readFileSync(join(out, 'SKILL.md'), 'utf8'), 'mine');
    assert.match(
      again.out,
      /--fresh deleted the run in .* and kept 2 file\(s\) no run writes: SKILL\.md, notes\.txt/,
    );
  });

  it("refuses a new run in a folder of the person's own, before writing anything there", () => {
    const before = readdirSync(dir).sort();
    const r = cli(['train', config, '--out', dir, '--cfg-options', 'train.num_epochs=1']);
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /the folder holds files but no run \(SKILL\.md, skillopt\.yaml, tasks\.jsonl/);
    assert.deepEqual(readdirSync(dir).sort(), before);
  });

  it('--force goes on under a changed config, keeping the steps done, but never with other data or batches', () => {
    const first = train([]);
    assert.equal(first.code, 0, first.out);
    const steps = (JSON.parse(readFileSync(join(out, RUN_FILE.history), 'utf8')) as unknown[]).length;
    const refused = train(['--resume'], ['train.num_epochs=2', 'optimizer.learning_rate=5']);
    assert.equal(refused.code, 1, refused.out);
    assert.match(refused.out, /different config \(num_epochs: 1 → 2; edit_budget: 3 → 5\)/);
    assert.match(refused.out, /pass --force/);
    const forced = cli([
      'train',
      config,
      '--out',
      out,
      '--resume',
      '--force',
      '--cfg-options',
      'train.num_epochs=2',
      'cache.enabled=false',
      'optimizer.learning_rate=5',
    ]);
    assert.equal(forced.code, 0, forced.out);
    assert.match(forced.out, /resuming under a changed config \(--force\).*num_epochs: 1 → 2/);
    const config2 = JSON.parse(readFileSync(join(out, RUN_FILE.config), 'utf8')) as Record<string, unknown>;
    assert.equal(config2.num_epochs, 2);
    assert.ok((JSON.parse(readFileSync(join(out, RUN_FILE.history), 'utf8')) as unknown[]).length > steps);
    const seed = train(
      ['--resume', '--force'],
      ['train.num_epochs=2', 'optimizer.learning_rate=5', 'train.seed=7'],
    );
    assert.equal(seed.code, 1, seed.out);
    assert.match(seed.out, /--force cannot change seed: they decide which items each step sees/);
    assert.match(train(['--force', '--fresh']).out, /--force and --fresh exclude each other/);
  });

  it('refuses to resume after the task data changed, naming the split and item; an older folder gets a notice', () => {
    const first = train([], ['limits.max_tokens=20000']);
    assert.equal(first.code, 3, first.out);
    const [generated] = readdirSync(join(out, RUN_DIR.generatedSplits));
    const splitFile = join(out, RUN_DIR.generatedSplits, generated!, 'val', 'items.json');
    const split = readFileSync(splitFile, 'utf8');
    const selection = JSON.parse(split) as Array<{ id: string }>;
    const edited = selection[0]!.id;
    const tasks = join(dir, 'tasks.jsonl');
    const original = readFileSync(tasks, 'utf8');
    writeFileSync(
      tasks,
      original
        .split('\n')
        .map((l) => (l.includes(`"${edited}"`) ? l.replace(/"answer": "[^"]*"/, '"answer": "edited"') : l))
        .join('\n'),
    );
    const baseline = join(out, RUN_DIR.baselineSelection, 'results.jsonl');
    const results = readFileSync(baseline, 'utf8');
    const refused = train(['--resume'], ['limits.max_tokens=40000']);
    assert.equal(refused.code, 1, refused.out);
    assert.match(
      refused.out,
      new RegExp(
        `task data changed since this run started: the selection split \\(item ${edited} changed\\)`,
      ),
    );
    assert.match(refused.out, /--fresh/);
    assert.doesNotMatch(refused.out, /\n\s+at /, 'a stack trace was printed');
    assert.equal(refused.stdout, '', 'printed before it refused');
    assert.equal(readFileSync(baseline, 'utf8'), results);
    assert.equal(readFileSync(splitFile, 'utf8'), split, 'the refused run rewrote the generated split');
    // With the data restored, the run goes on.
    writeFileSync(tasks, original);
    const restored = train(['--resume'], ['limits.max_tokens=30000']);
    assert.equal(restored.code, 3, restored.out);
    // A folder from before data were recorded goes on, saying it cannot check.
    rmSync(join(out, RUN_FILE.dataDigest));
    const older = train(['--resume'], ['limits.max_tokens=40000']);
    assert.ok(older.code === 0 || older.code === 3, older.out);
    assert.match(older.out, /no record of the task data it started with/);
    assert.ok(existsSync(join(out, RUN_FILE.dataDigest)));
  });

  it('after a stop on a cap, prints a resume line that raises the cap, and with it raised the run goes on', () => {
    const first = train([], ['limits.max_tokens=20000']);
    assert.equal(first.code, 3, first.out);
    const line = /Resume with:\n {2}(.*)\n/.exec(first.out)?.[1] ?? '';
    assert.match(
      line,
      /--resume --cfg-options train\.num_epochs=1 cache\.enabled=false limits\.max_tokens=MORE_THAN_\d+$/,
    );
    assert.doesNotMatch(line, /max_tokens=20000/);
    assert.match(first.out, /unless limits\.max_tokens is raised above \d+/);
    // --json: the event names the cap.
    const json = train(['--resume', '--json'], ['limits.max_tokens=20000']);
    assert.equal(json.code, 3, json.out);
    const stopped = json.out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as EngineEvent)
      .find((e) => e.type === 'run/stopped');
    assert.ok(stopped?.type === 'run/stopped' && stopped.cap?.key === 'limits.max_tokens', json.out);
    assert.match(stopped.resumeCommand, /limits\.max_tokens=MORE_THAN_\d+$/);
    // The line as printed, the placeholder filled in, goes on past where it stopped.
    const steps = (JSON.parse(readFileSync(join(out, RUN_FILE.history), 'utf8')) as unknown[]).length;
    const words = line
      .slice(line.indexOf(' train ') + ' train '.length)
      .split(' ')
      .map((w) => w.replace(/MORE_THAN_\d+/, '60000'));
    const raised = cli(['train', ...words]);
    assert.ok(raised.code === 0 || raised.code === 3, raised.out);
    assert.ok((JSON.parse(readFileSync(join(out, RUN_FILE.history), 'utf8')) as unknown[]).length > steps);
  });

  it('says so when --resume names a folder without a run, and starts nothing', () => {
    const r = cli(['train', config, '--out', out, '--resume']);
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /no run to resume/);
    // Refused before the folder is made or a ledger row written: nothing is left behind.
    assert.ok(!existsSync(out), 'the refused resume made the run folder');
  });

  it('resumes a run killed before its first state was saved (during the baseline), and guards its config', () => {
    const first = train();
    assert.equal(first.code, 0, first.out);
    killedBeforeFirstSave();
    assert.ok(!existsSync(join(out, RUN_FILE.state)));
    const other = train([], ['train.seed=7']);
    assert.equal(other.code, 1, other.out);
    assert.match(other.out, /started with a different config \(seed: 42 → 7\)/);
    const resumed = train(['--resume']);
    assert.equal(resumed.code, 0, resumed.out);
    assert.ok(existsSync(join(out, RUN_FILE.history)));
  });

  it('goes on from its own copy when the skill file changed since the run started, and says so', () => {
    const first = train([]);
    assert.equal(first.code, 0, first.out);
    const initial = readFileSync(join(out, 'skills', 'skill_v0000.md'), 'utf8');
    writeFileSync(join(dir, 'SKILL.md'), initial + '\n- A line written after the run started.\n');
    const again = train(['--resume']);
    assert.equal(again.code, 0, again.out);
    assert.match(again.out, /the skill file changed since this run started/);
    assert.equal(readFileSync(join(out, 'skills', 'skill_v0000.md'), 'utf8'), initial);
  });

  it('says so under skill-aware reflection too when the skill file changed since the run started', () => {
    const skillAware = ['optimizer.use_skill_aware_reflection=true'];
    const first = train([], skillAware);
    assert.equal(first.code, 0, first.out);
    const initial = readFileSync(join(out, 'skills', 'skill_v0000.md'), 'utf8');
    writeFileSync(join(dir, 'SKILL.md'), initial + '\n- A line written after the run started.\n');
    const again = train(['--resume'], skillAware);
    assert.equal(again.code, 0, again.out);
    assert.match(again.out, /the skill file changed since this run started/);
    assert.equal(readFileSync(join(out, 'skills', 'skill_v0000.md'), 'utf8'), initial);
  });

  it('goes on from its own copy when the skill file changed before the run saved its first step', () => {
    const first = train();
    assert.equal(first.code, 0, first.out);
    const initial = readFileSync(join(out, 'skills', 'skill_v0000.md'), 'utf8');
    killedBeforeFirstSave();
    const skills = join(out, RUN_DIR.skills);
    const added = '- A line written after the run started.';
    writeFileSync(join(dir, 'SKILL.md'), `${initial}\n${added}\n`);
    const again = train(['--resume']);
    assert.equal(again.code, 0, again.out);
    assert.match(
      again.out,
      /the skill file changed since this run started; the run goes on from its own copy/,
    );
    assert.equal(
      readFileSync(join(skills, 'skill_v0000.md'), 'utf8'),
      initial,
      'the initial copy was rewritten',
    );
    assert.ok(
      !readFileSync(join(skills, 'skill_v0001.md'), 'utf8').includes(added),
      'step 1 trained the changed file',
    );
  });
});
