import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { RUN_FILE } from '../../../src/engine/store/layout';
import { cliProcess, type CliRun } from '../../support/cliProcess';

/** The environment without what npm sets for a script (npm_command, npm_lifecycle_event, …). */
function withoutNpm(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('npm_')));
}

const root = join(__dirname, '..', '..', '..');
const example = join(root, 'examples', 'house-style');

function cli(args: string[], cwd?: string, env?: NodeJS.ProcessEnv): CliRun {
  return cliProcess(args, { cwd, env });
}

describe('skillopt CLI', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-cli-'));
    cpSync(example, dir, { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** `skillopt eval` of the example skill on the val split, as JSON, with these overrides. */
  const evalVal = (out: string, ...overrides: string[]): string[] => [
    'eval',
    join(dir, 'skillopt.yaml'),
    '--skill',
    join(dir, 'SKILL.md'),
    '--split',
    'val',
    '--out',
    out,
    '--json',
    '--cfg-options',
    ...overrides,
  ];

  it('prints help, and exits 2 on a bad command line', () => {
    const help = cli(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /skillopt validate <config>/);
    const bad = cli(['frobnicate']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown command "frobnicate"/);
  });

  it('prints the version of package.json', () => {
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    const r = cli(['--version']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `skillopt ${version}\n`);
  });

  it('validates the example without running or spending anything', () => {
    const r = cli(['validate', join(dir, 'skillopt.yaml')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /train 25, selection 19, test 18/);
    assert.match(r.stdout, /SIMULATED/);
    assert.match(r.stdout, /model calls/);
    assert.match(r.stdout, /Nothing was run and nothing was spent/);
    assert.match(r.stdout, /Estimated cost: none \(simulated models\)/);
    assert.match(r.stdout, /gate {6}strict; 19 items × 1 repeat: only Δ ≥ 0\.263 can be told from noise/);
    assert.match(
      r.stdout,
      /no skill {2}the target alone is scored on selection and test at the end \(37 calls; evaluation\.no_skill_baseline: false skips it\)/,
    );
  });

  it('gives a dollar range for priced models before anything is spent', () => {
    const r = cli(
      [
        'validate',
        join(dir, 'skillopt.yaml'),
        '--cfg-options',
        'model.optimizer_backend=openai',
        'model.target_backend=openai',
        'model.optimizer=gpt-4o',
        'model.target=gpt-4o-mini',
      ],
      root,
      { ...process.env, OPENAI_API_KEY: 'sk-test-not-a-real-key' },
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /Estimated cost: \$\d+\.\d\d – \$\d+\.\d\d at list prices/);
    // The example's short skill is under OpenAI's cache minimum: the line under the range says so.
    assert.match(r.stdout, /\n {2}Prompt cache: no cache saving assumed where the target's skill prefix/);
  });

  it('names the file, line, key and fix for a broken key', () => {
    const cfg = join(dir, 'skillopt.yaml');
    writeFileSync(cfg, readFileSync(cfg, 'utf8').replace('learning_rate: 3', 'learning_rate: 0'));
    const r = cli(['validate', cfg]);
    assert.equal(r.code, 1);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(r.stderr, /skillopt\.yaml:\d+ \(optimizer\.learning_rate\): .*Fix: /);
  });

  it('refuses a misspelt key instead of running with its default', () => {
    const cfg = join(dir, 'skillopt.yaml');
    writeFileSync(cfg, readFileSync(cfg, 'utf8').replace('  batch_size:', '  batch_sise:'));
    const r = cli(['validate', cfg]);
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(
      r.stderr,
      /skillopt\.yaml:\d+ \(train\.batch_sise\): .*Fix: did you mean train\.batch_size\?/,
    );
  });

  it('names the missing task file', () => {
    const cfg = join(dir, 'skillopt.yaml');
    writeFileSync(
      cfg,
      readFileSync(cfg, 'utf8').replace('data_path: tasks.jsonl', 'data_path: missing.jsonl'),
    );
    const r = cli(['validate', cfg]);
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /missing\.jsonl/);
    assert.match(r.stderr, /Fix: /);
  });

  it('names the line of a task without an answer', () => {
    const tasks = join(dir, 'tasks.jsonl');
    const lines = readFileSync(tasks, 'utf8').trim().split('\n');
    const broken = JSON.parse(lines[4]!) as Record<string, unknown>;
    delete broken.answer;
    lines[4] = JSON.stringify(broken);
    writeFileSync(tasks, lines.join('\n') + '\n');
    const r = cli(['validate', join(dir, 'skillopt.yaml')]);
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /tasks\.jsonl:5/);
    assert.match(r.stderr, /answer/);
  });

  for (const [backend, label, key] of [
    ['claude_code_exec', 'Claude Code \\(claude\\)', 'claude_code_exec_path'],
    ['codex_exec', 'Codex \\(codex\\)', 'codex_exec_path'],
    ['copilot_exec', 'Copilot CLI \\(copilot\\)', 'copilot_exec_path'],
  ]) {
    it(`validate refuses ${backend} when its program is not on PATH, before anything runs`, () => {
      // PATH holds no agent program, and no *_EXEC_PATH variable names one.
      const env: NodeJS.ProcessEnv = { ...process.env, PATH: dir };
      for (const v of ['CLAUDE_CODE_EXEC_PATH', 'CODEX_EXEC_PATH', 'COPILOT_EXEC_PATH']) delete env[v];
      const r = cli(
        ['validate', join(dir, 'skillopt.yaml'), '--cfg-options', `model.target_backend=${backend}`],
        root,
        env,
      );
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(
          `model\\.${key}: ${label} was not found on PATH\\. Fix: install it .* or give its full path`,
        ),
      );
    });
  }

  it('applies edits and prints {skill, report} with --json', () => {
    const edits = join(dir, 'edits.json');
    writeFileSync(
      edits,
      JSON.stringify({
        edits: [
          { op: 'insert_after', target: '## Rules', content: '- Write dates as YYYY-MM-DD.' },
          { op: 'replace', target: 'no such text', content: 'x' },
        ],
      }),
    );
    const r = cli(['apply-edits', '--skill', join(dir, 'SKILL.md'), '--edits', edits, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as {
      skill: string;
      report: Array<{ index: number; op: string; status: string }>;
    };
    // The reference inserts "\n" + content + "\n" after the anchor line, hence the blank line.
    assert.match(out.skill, /## Rules\n\n- Write dates as YYYY-MM-DD\.\n/);
    assert.deepEqual(
      out.report.map((row) => [row.index, row.op, row.status]),
      [
        [1, 'insert_after', 'applied_insert_after'],
        [2, 'replace', 'skipped_replace_target_not_found'],
      ],
    );
  });

  it('evaluates a skill on a split with the target only', () => {
    const out = join(dir, 'eval');
    const r = cli(evalVal(out, 'cache.enabled=false'));
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout) as {
      split: string;
      n_items: number;
      hard: number;
      model_calls: number;
    };
    assert.equal(summary.split, 'val');
    assert.equal(summary.n_items, 19);
    assert.equal(summary.model_calls, 19);
    const file = JSON.parse(readFileSync(join(out, 'eval_summary.json'), 'utf8')) as { hard: number };
    assert.equal(file.hard, summary.hard);
  });

  it('refuses eval --batch for a target without a batch API before any call, naming the key and the way out', () => {
    const out = join(dir, 'eval');
    const args = evalVal(out, 'cache.enabled=false');
    const r = cli([...args.slice(0, args.indexOf('--json')), '--batch']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /the sim target has no batch API/);
    assert.match(r.stderr, /evaluation\.batch_api: off \(or drop --batch\)/);
    assert.equal(existsSync(join(out, 'eval_val')), false);
    // Nothing to cancel either: said in the flag's own words.
    const c = cli([...args.slice(0, args.indexOf('--json')), '--cancel-batch']);
    assert.equal(c.code, 2);
    assert.match(
      c.stderr,
      /--cancel-batch: the sim target has no batch API .*, so no batch of this target can be running/,
    );
    assert.match(c.stderr, /Fix: drop --cancel-batch/);
  });

  it('eval writes under the run folder of the skill, names the split as given, and never beside the config', () => {
    const bare = cli([
      'eval',
      join(dir, 'skillopt.yaml'),
      '--skill',
      join(dir, 'SKILL.md'),
      '--split',
      'selection',
    ]);
    assert.equal(bare.code, 2, bare.stdout + bare.stderr);
    assert.match(bare.stderr, /eval needs a place for its results.*--out DIR/s);
    const run = join(dir, 'runs', 'hs');
    mkdirSync(run, { recursive: true });
    writeFileSync(join(run, RUN_FILE.state), '{}');
    copyFileSync(join(dir, 'SKILL.md'), join(run, RUN_FILE.bestSkill));
    const r = cli([
      'eval',
      join(dir, 'skillopt.yaml'),
      '--skill',
      join(run, RUN_FILE.bestSkill),
      '--split',
      'selection',
      '--json',
      '--cfg-options',
      'cache.enabled=false',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout) as { split: string; out_dir: string; n_items: number };
    assert.equal(summary.split, 'selection');
    assert.equal(summary.n_items, 19);
    assert.equal(summary.out_dir, join(run, 'eval_only', 'best_skill_selection'));
    assert.ok(existsSync(join(summary.out_dir, 'eval_selection', 'results.jsonl')));
    assert.ok(existsSync(join(summary.out_dir, 'eval_summary.json')));

    // The run trained further: its best skill changed. The default folder holds the evaluation of
    // the old one, so this one goes beside it (with a note), and the old one is found again after.
    const best = join(run, RUN_FILE.bestSkill);
    const old = readFileSync(best, 'utf8');
    writeFileSync(best, `${old}\n- Answer in one sentence.\n`);
    const evalBest = (): ReturnType<typeof cli> =>
      cli([
        'eval',
        join(dir, 'skillopt.yaml'),
        '--skill',
        best,
        '--split',
        'selection',
        '--cfg-options',
        'cache.enabled=false',
      ]);
    const changed = evalBest();
    assert.equal(changed.code, 0, changed.stderr);
    const beside = join(run, 'eval_only', 'best_skill_selection_2');
    assert.match(
      changed.stderr,
      /best_skill_selection holds the evaluation of another version of best_skill\.md/,
    );
    assert.match(changed.stdout, new RegExp(`Written: ${beside.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    writeFileSync(best, old);
    const back = evalBest();
    assert.equal(back.code, 0, back.stderr);
    assert.doesNotMatch(back.stderr, /holds the evaluation of another version/);
    assert.match(back.stdout, /Written: \S+best_skill_selection\/eval_summary\.json/);
    assert.ok(!existsSync(join(run, 'eval_only', 'best_skill_selection_3')));
  });

  it('runs an agent CLI as the target, and keeps how each agent run ended in the trajectory', () => {
    const out = join(dir, 'eval');
    const agent = join(root, 'test', 'fixtures', 'fakecli', 'fakeAgent.cjs');
    const r = cli(
      evalVal(
        out,
        'model.target_backend=command',
        `model.target_command=node ${agent} echo {task_file} {skill_file} {workspace} {prompt}`,
        'cache.enabled=false',
      ),
    );
    assert.equal(r.code, 0, r.stderr);
    const rows = readFileSync(join(out, 'eval_val', 'results.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; response: string; agent_run?: Record<string, unknown> });
    assert.equal(rows.length, 19);
    for (const row of rows) {
      // The skill sits in a folder named after its front matter, where agent CLIs look for it.
      assert.match(row.response, /^skill_dirs=house-style$/m);
      assert.match(row.response, /skill_file_ok=true/);
      assert.equal(row.agent_run?.exit_code, 0);
      assert.equal(row.agent_run?.timed_out, false);
      assert.equal(row.agent_run?.stderr, 'thinking...\n');
    }
    const conversation = JSON.parse(
      readFileSync(join(out, 'eval_val', 'predictions', rows[0].id, 'conversation.json'), 'utf8'),
    ) as { content: string }[];
    assert.ok(
      conversation.some((m) =>
        /^\[AGENT RUN\] exit 0 after \d+\.\d s; stderr:\nthinking\.\.\.$/.test(m.content),
      ),
    );
  });

  it('stops at a safe point on Ctrl-C even when every reply is instant, and says how to resume', async () => {
    const out = join(dir, 'run');
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(root, 'src', 'cli', 'main.ts'),
        'train',
        join(dir, 'skillopt.yaml'),
        '--out',
        out,
        '--cfg-options',
        'train.num_epochs=50',
        'cache.enabled=false',
      ],
      // As a newcomer runs it: no `skillopt` program on PATH, not under an npm script.
      { cwd: root, env: { ...withoutNpm(process.env), PATH: dirname(process.execPath), NO_COLOR: '1' } },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // Interrupt once the first step has finished, in the middle of a 50-epoch run.
    child.stdout.on('data', (d: Buffer) => {
      const before = stdout;
      stdout += d.toString();
      if (!/step\s+1\b/i.test(before) && /step\s+1\b/i.test(stdout)) child.kill('SIGINT');
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 130, stdout + stderr);
    // The estimate is the whole run's, not what a resume or the response cache leaves to ask.
    assert.match(stdout, /^Estimated model calls for the whole run: at most ~\d+ \(fewer on a resume/m);
    // The line can be pasted where `skillopt` is not on PATH (the README runs it through npx).
    assert.match(stdout, /Resume with:\n\s+cd \S+ && npx skillopt train .* --resume/);
    const history = JSON.parse(readFileSync(join(out, 'history.json'), 'utf8')) as unknown[];
    assert.ok(history.length >= 1 && history.length < 50, `${history.length} steps recorded`);
  });
});
