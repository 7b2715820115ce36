import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliProcess as cli } from '../../support/cliProcess';

const root = join(__dirname, '..', '..', '..');
const example = join(root, 'examples', 'house-style');

/** One line on stderr, nothing on stdout, no stack or raw node error text. */
function assertOneLine(r: { stdout: string; stderr: string }): void {
  assert.equal(r.stdout, '');
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.doesNotMatch(r.stderr, /ENOENT|ERR_PARSE_ARGS|TypeError|\n\s+at /);
}

describe('skillopt command line', function () {
  this.timeout(60_000);
  let dir: string;
  let cfg: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-args-'));
    cpSync(example, dir, { recursive: true });
    cfg = join(dir, 'skillopt.yaml');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const flagsOf: Record<string, string[]> = {
    train: ['--config', '--out', '--resume', '--fresh', '--cfg-options', '--json'],
    eval: ['--config', '--skill', '--split', '--out', '--cfg-options', '--json'],
    validate: ['--config', '--smoke', '--out', '--cfg-options', '--json'],
    'apply-edits': ['--skill', '--edits', '--config', '--write', '--anchor-mode', '--json'],
  };
  for (const [command, flags] of Object.entries(flagsOf)) {
    for (const h of ['--help', '-h']) {
      it(`${command} ${h} prints every flag on its own line and an example, exit 0`, () => {
        const r = cli([command, h]);
        assert.equal(r.code, 0, r.stderr);
        for (const flag of flags) assert.match(r.stdout, new RegExp(`^  ${flag}\\b.* \\S`, 'm'), flag);
        assert.match(r.stdout, new RegExp(`Examples?:\\n  skillopt ${command} `));
      });
    }
  }

  it('top-level -h lists the commands and an example', () => {
    const r = cli(['-h']);
    assert.equal(r.code, 0);
    for (const c of Object.keys(flagsOf)) assert.match(r.stdout, new RegExp(`skillopt ${c} `));
    assert.match(r.stdout, /Example:\n {2}skillopt /);
    assert.match(cli(['help', 'train']).stdout, /--resume/);
  });

  it('train <config> --help prints help and starts no run', () => {
    const out = join(dir, 'run');
    const r = cli(['train', cfg, '--out', out, '--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^skillopt train:/);
    assert.doesNotMatch(r.stdout, /Estimated model calls/);
    assert.equal(existsSync(out), false);
  });

  it('refuses a misspelt flag with "did you mean", exit 2, and starts no run', () => {
    const out = join(dir, 'run');
    const r = cli(['train', cfg, '--out', out, '--reusme', '1']);
    assert.equal(r.code, 2);
    assertOneLine(r);
    assert.match(r.stderr, /unknown flag --reusme\. Fix: did you mean --resume\?/);
    assert.equal(existsSync(out), false);
  });

  it('refuses a misspelt command with "did you mean", exit 2', () => {
    for (const [args, near] of [
      [['trian', cfg], 'train'],
      [['valdiate', cfg], 'validate'],
      [['apply-edit', '--skill', 'a'], 'apply-edits'],
      [['help', 'evl'], 'eval'],
    ] as const) {
      const r = cli([...args]);
      assert.equal(r.code, 2, args.join(' '));
      assertOneLine(r);
      assert.match(
        r.stderr,
        new RegExp(`unknown command "${args[args[0] === 'help' ? 1 : 0]}"\\. Fix: did you mean ${near}\\?`),
      );
    }
    const far = cli(['frobnicate']);
    assert.equal(far.code, 2);
    assert.doesNotMatch(far.stderr, /did you mean/);
  });

  it('refuses an unknown flag on every command without raw parser text', () => {
    for (const args of [
      ['validate', cfg, '--frobnicate', '3'],
      ['eval', cfg, '--skill', join(dir, 'SKILL.md'), '--frobnicate'],
      ['apply-edits', '--skill', 'a', '--edits', 'b', '--frobnicate'],
      ['validate', cfg, '-x'],
    ]) {
      const r = cli(args);
      assert.equal(r.code, 2, args.join(' '));
      assertOneLine(r);
      assert.match(r.stderr, /unknown flag --?(frobnicate|x)\b/);
    }
  });

  it('says which command does not take --cfg-options, never "did you mean" the same flag', () => {
    const r = cli([
      'apply-edits',
      '--skill',
      'a',
      '--edits',
      'b',
      '--cfg-options',
      'optimizer.anchor_mode=strict',
    ]);
    assert.equal(r.code, 2);
    assertOneLine(r);
    assert.match(
      r.stderr,
      /skillopt apply-edits does not take --cfg-options\. Fix: set the keys in the config file/,
    );
    assert.doesNotMatch(r.stderr, /did you mean/);
  });

  it("keeps the reference's legacy flags, and suggests one for a typo of it", () => {
    const ok = cli(['validate', cfg, '--batch_size', '5', '--edit-budget=2']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /batch 5,.*edit budget \S+ 2→/);
    const typo = cli(['validate', cfg, '--batch_sise', '5']);
    assert.equal(typo.code, 2);
    assertOneLine(typo);
    assert.match(typo.stderr, /unknown flag --batch_sise\. Fix: did you mean --batch_size\?/);
  });

  it("says what each of the reference's judge flags does here, and takes no unknown-flag exit for them", () => {
    const r = cli([
      'validate',
      cfg,
      '--judge_retries',
      '3',
      '--judge-max-completion-tokens',
      '900',
      '--judge_model',
      'gpt-4.1-mini',
      '--json',
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const warnings = (JSON.parse(r.stdout) as { warnings: string[] }).warnings.join('\n');
    assert.match(
      warnings,
      /^--judge_retries: ignored \(the reference reads it nowhere\).*limits\.max_retries/m,
    );
    assert.match(warnings, /^--judge_max_completion_tokens: ignored \(the reference reads it nowhere\)/m);
    assert.match(warnings, /^--judge_model \(evaluation\.judge_model\): sets evaluation\.judge_model here/m);
  });

  it('takes --config FILE as the reference spells it, and refuses two configs', () => {
    for (const args of [
      ['validate', '--config', cfg],
      ['validate', `--config=${cfg}`],
    ]) {
      const r = cli(args);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /train 25, selection 19, test 18/);
    }
    const twice = cli(['validate', cfg, '--config', cfg]);
    assert.equal(twice.code, 2);
    assertOneLine(twice);
  });

  it('names a missing config, skill or edits file on one line, exit 1', () => {
    const edits = join(dir, 'edits.json');
    writeFileSync(edits, '[]');
    for (const [args, file] of [
      [['validate', join(dir, 'nope.yaml')], 'nope.yaml'],
      [['eval', cfg, '--skill', join(dir, 'nope.md')], 'nope.md'],
      [['apply-edits', '--skill', join(dir, 'nope.md'), '--edits', edits], 'nope.md'],
      [['apply-edits', '--skill', join(dir, 'SKILL.md'), '--edits', join(dir, 'nope.json')], 'nope.json'],
    ] as const) {
      const r = cli([...args]);
      assert.equal(r.code, 1, args.join(' '));
      assertOneLine(r);
      assert.match(r.stderr, new RegExp(`${file}: .*not found\\. Fix: `));
    }
  });

  it('with --json every error is one JSON object on stdout and nothing else', () => {
    for (const [args, reason, code] of [
      [['train', cfg, '--json', '--reusme', '1'], 'usage', 2],
      [['validate', cfg, '--json', '--cfg-options', 'optimizer.learning_rate=0'], 'config', 1],
      [['eval', cfg, '--json', '--skill', join(dir, 'nope.md')], 'io', 1],
      [['validate', '--json'], 'usage', 2],
      // --json before the command, or with none at all.
      [['--json'], 'usage', 2],
      [['--json', 'frobnicate'], 'usage', 2],
      [['--json', 'validate', cfg, '--cfg-options', 'env.split_ration=4:3:3'], 'config', 1],
    ] as const) {
      const r = cli([...args]);
      assert.equal(r.code, code, args.join(' '));
      assert.equal(r.stderr, '');
      const lines = r.stdout.trim().split('\n');
      assert.equal(lines.length, 1, r.stdout);
      const body = JSON.parse(lines[0]) as { error: { reason: string; message: string; fix?: string } };
      assert.deepEqual(Object.keys(body), ['error']);
      assert.equal(body.error.reason, reason);
      assert.ok(body.error.message.length > 0);
      assert.doesNotMatch(body.error.message, /Fix:/);
      assert.equal(typeof body.error.fix, 'string');
    }
  });

  it('apply-edits --write writes the result back to the skill and prints no skill', () => {
    const skill = join(dir, 'SKILL.md');
    const edits = join(dir, 'edits.json');
    writeFileSync(edits, JSON.stringify([{ op: 'append', content: '- Added rule.' }]));
    const before = readFileSync(skill, 'utf8');
    const printed = cli(['apply-edits', '--skill', skill, '--edits', edits]);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, /- Added rule\.\n$/);
    assert.equal(readFileSync(skill, 'utf8'), before);
    const written = cli(['apply-edits', '--skill', skill, '--edits', edits, '--write']);
    assert.equal(written.code, 0, written.stderr);
    assert.equal(written.stdout, '');
    assert.equal(readFileSync(skill, 'utf8'), printed.stdout);
    assert.match(written.stderr, /Written: /);
  });

  it('apply-edits refuses an unknown op, naming it and the edit', () => {
    const skill = join(dir, 'SKILL.md');
    const edits = join(dir, 'edits.json');
    writeFileSync(edits, JSON.stringify({ edits: [{ op: 'append', content: 'x' }, { op: 'frobnicate' }] }));
    const before = readFileSync(skill, 'utf8');
    const r = cli(['apply-edits', '--skill', skill, '--edits', edits, '--write']);
    assert.equal(r.code, 1);
    assertOneLine(r);
    assert.match(
      r.stderr,
      /edits\.json \(edits\[1\]\.op\): edit 2 has an unknown op "frobnicate"\. Fix: use one of append/,
    );
    assert.equal(readFileSync(skill, 'utf8'), before);
  });

  it('apply-edits refuses an edit without the fields its op needs (an apply report passed by mistake)', () => {
    const skill = join(dir, 'SKILL.md');
    const edits = join(dir, 'edit_apply_report.json');
    // A run's edit_apply_report.json: op and target, but only a content_preview.
    writeFileSync(
      edits,
      JSON.stringify([
        { index: 1, op: 'append', target: '', content_preview: '- x', status: 'applied_append' },
      ]),
    );
    const before = readFileSync(skill, 'utf8');
    const r = cli(['apply-edits', '--skill', skill, '--edits', edits, '--write']);
    assert.equal(r.code, 1);
    assertOneLine(r);
    assert.match(
      r.stderr,
      /\(edits\[0\]\.content\): edit 1 \(append\): op "append" needs a non-empty content\. Fix: /,
    );
    assert.equal(readFileSync(skill, 'utf8'), before);
  });
});
