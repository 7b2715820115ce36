import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAnthropicServer } from '../../support/loopback/anthropicServer';
import type { LoopbackServer, Script } from '../../support/loopback/core';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import { tempDir } from '../train/helpers';
import { cliInProcess as cli, type CliOutput } from '../../support/cliInProcess';

const example = join(__dirname, '..', '..', '..', 'examples', 'house-style');
const evalFixtures = join(__dirname, '..', '..', 'fixtures', 'evals');

/** A tmpfs mounted at `dir` (root on Linux only); false where this machine cannot mount one. */
function mountTmpfs(dir: string, options: string): boolean {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

interface Case {
  name: string;
  /** The command line, given the case's folder (a copy of the bundled example). */
  argv: (d: string) => string[];
  setup?: (d: string) => void;
  /** What the one message must name: the file, key or flag to change. */
  place: RegExp;
  /** More the message must say. */
  says?: RegExp;
  /** What no output may show (a secret). */
  never?: RegExp;
}

const yaml = (d: string, name: string, text: string): string => {
  writeFileSync(join(d, name), text);
  return join(d, name);
};
/** A few lines of YAML whose aliases expand to 9^6 copies ("billion laughs"). */
const aliasBomb =
  [
    'a: &a [x, x, x, x, x, x, x, x, x]',
    ...'bcdef'.split('').map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcdef'[i]}`).join(', ')}]`),
  ].join('\n') + '\n';
/** The example's models and tasks, and `extra` sections (each section written once: YAML keys are unique). */
const withConfig = (d: string, extra: string): string =>
  yaml(
    d,
    'bad.yaml',
    'model:\n  optimizer_backend: sim\n  target_backend: sim\n  optimizer: sim-optimizer\n  target: sim-target\n' +
      'env:\n  skill_init: SKILL.md\n  data_path: tasks.jsonl\n  split_ratio: "4:3:3"\n  scorer: exact\n' +
      extra,
  );
const validate =
  (config: (d: string) => string, ...rest: string[]) =>
  (d: string) => ['validate', config(d), ...rest];
const opts =
  (...o: string[]) =>
  (d: string) => ['validate', join(d, 'skillopt.yaml'), '--cfg-options', ...o];

/** `--cfg-options key=<file in the case folder>`: a --cfg-options path is relative to the working folder. */
const optAt =
  (key: string, file: string) =>
  (d: string): string[] => ['validate', join(d, 'skillopt.yaml'), '--cfg-options', `${key}=${join(d, file)}`];

const CASES: Case[] = [
  // ── the command line ──
  { name: 'no command', argv: () => ['train'], place: /config/ },
  { name: 'unknown command', argv: () => ['frobnicate'], place: /frobnicate/ },
  { name: 'unknown flag', argv: (d) => ['eval', join(d, 'skillopt.yaml'), '--frob'], place: /--frob/ },
  { name: 'missing config file', argv: (d) => ['validate', join(d, 'nope.yaml')], place: /nope\.yaml/ },
  { name: 'config is a folder', argv: (d) => ['validate', d], place: /is a folder|folder/ },
  {
    name: '--resume with --fresh',
    argv: (d) => ['train', join(d, 'skillopt.yaml'), '--resume', '--fresh', '--out', join(d, 'r')],
    place: /--resume/,
  },
  {
    name: '--resume without --out',
    argv: (d) => ['train', join(d, 'skillopt.yaml'), '--resume'],
    place: /--out/,
  },
  {
    name: '--resume on a folder with no run',
    argv: (d) => ['train', join(d, 'skillopt.yaml'), '--resume', '--out', join(d, 'empty')],
    place: /empty/,
  },
  { name: '--cfg-options without =', argv: opts('train.num_epochs'), place: /train\.num_epochs/ },
  {
    name: '--cfg-options unknown key',
    argv: opts('train.num_epoch=2'),
    place: /train\.num_epoch/,
    says: /num_epochs/,
  },
  { name: '--cfg-options unknown section', argv: opts('trian.num_epochs=2'), place: /trian/ },
  {
    name: '--out given empty (an unset variable)',
    argv: (d) => ['train', join(d, 'skillopt.yaml'), '--out', ''],
    place: /--out was given an empty value/,
  },
  {
    name: '--out is a file',
    argv: (d) => ['train', join(d, 'skillopt.yaml'), '--out', join(d, 'SKILL.md')],
    place: /SKILL\.md/,
  },
  {
    name: "--out is a folder of the person's own (beside the config)",
    argv: (d) => ['train', join(d, 'skillopt.yaml'), '--out', d],
    place: /cfg\b/,
    says: /the folder holds files but no run \(SKILL\.md, skillopt\.yaml/,
  },
  // ── the config file ──
  {
    name: 'YAML syntax error',
    argv: validate((d) => yaml(d, 'bad.yaml', 'train:\n  num_epochs: [1,\n')),
    place: /bad\.yaml/,
  },
  {
    name: 'config is a YAML alias bomb',
    argv: validate((d) => yaml(d, 'bad.yaml', `${aliasBomb}train:\n  num_epochs: 1\n`)),
    place: /bad\.yaml/,
    says: /alias bomb.*Fix: write the repeated values out/,
  },
  {
    name: 'config is a list',
    argv: validate((d) => yaml(d, 'bad.yaml', '- train\n- env\n')),
    place: /bad\.yaml/,
  },
  {
    name: 'config is empty',
    argv: validate((d) => yaml(d, 'bad.yaml', '')),
    place: /bad\.yaml|data_path|skill_init/,
  },
  {
    name: 'section typo trian:',
    argv: validate((d) =>
      yaml(d, 'bad.yaml', `trian:\n  num_epochs: 2\n${readFileSync(join(example, 'skillopt.yaml'), 'utf8')}`),
    ),
    place: /trian/,
    says: /did you mean train/,
  },
  {
    name: 'key typo in a section',
    argv: validate((d) => withConfig(d, 'train:\n  num_epoch: 2\n')),
    place: /num_epoch/,
    says: /num_epochs/,
  },
  { name: 'section is a scalar', argv: validate((d) => withConfig(d, 'train: 3\n')), place: /train/ },
  { name: 'negative epochs', argv: opts('train.num_epochs=-1'), place: /train\.num_epochs/ },
  { name: 'epochs as text', argv: opts('train.num_epochs=two'), place: /train\.num_epochs/ },
  { name: 'batch size 0', argv: opts('train.batch_size=0'), place: /train\.batch_size/ },
  { name: 'fractional batch size', argv: opts('train.batch_size=2.5'), place: /train\.batch_size/ },
  { name: 'learning rate 0', argv: opts('optimizer.learning_rate=0'), place: /optimizer\.learning_rate/ },
  {
    name: 'min learning rate above learning rate',
    argv: opts('optimizer.learning_rate=2', 'optimizer.min_learning_rate=5'),
    place: /min_learning_rate/,
  },
  {
    name: 'unknown update mode',
    argv: opts('optimizer.skill_update_mode=bogus'),
    place: /skill_update_mode/,
  },
  { name: 'unknown lr scheduler', argv: opts('optimizer.lr_scheduler=bogus'), place: /lr_scheduler/ },
  { name: 'unknown gate metric', argv: opts('evaluation.gate_metric=bogus'), place: /gate_metric/ },
  { name: 'unknown review mode', argv: opts('review.mode=bogus'), place: /review\.mode/ },
  { name: 'errored share above 1', argv: opts('limits.max_errored_share=2'), place: /max_errored_share/ },
  { name: 'negative dollar cap', argv: opts('limits.max_dollars=-1'), place: /max_dollars/ },
  { name: 'unknown target backend', argv: opts('model.target_backend=frob'), place: /model\.target_backend/ },
  {
    name: 'unknown optimizer backend',
    argv: opts('model.optimizer_backend=frob'),
    place: /model\.optimizer_backend/,
  },
  { name: 'bad split ratio', argv: opts('env.split_ratio=1:2'), place: /split_ratio/ },
  { name: 'unknown split mode', argv: opts('env.split_mode=bogus'), place: /split_mode/ },
  {
    name: 'split_dir mode without a folder',
    argv: opts('env.split_mode=split_dir'),
    place: /env\.split_dir/,
  },
  {
    name: 'split_dir is missing',
    argv: opts('env.split_mode=split_dir', 'env.split_dir=nowhere'),
    place: /nowhere/,
  },
  {
    name: 'train_size does not match the split',
    argv: opts('train.train_size=7'),
    place: /train\.train_size/,
  },
  { name: 'env.name leaves the run folder', argv: opts('env.name=../..'), place: /env\.name/ },
  {
    name: 'skill folder name leaves the skills folder',
    argv: opts('model.target_skill_name=../evil'),
    place: /model\.target_skill_name/,
    says: /must be a folder name: letters, digits/,
  },
  {
    name: 'misspelt env key',
    argv: validate((d) => withConfig(d, '  split_ration: "4:3:3"\n')),
    place: /bad\.yaml:\d+ \(env\.split_ration\)/,
    says: /did you mean env\.split_ratio\?/,
  },
  { name: 'unknown bare --cfg-options key', argv: opts('bogus_key=1'), place: /env\.bogus_key/ },
  {
    name: 'a benchmark key of the wrong type',
    argv: opts('env.use_theorem=maybe'),
    place: /env\.use_theorem/,
    says: /must be true or false/,
  },
  { name: 'unknown scorer', argv: opts('env.scorer=bogus'), place: /scorer/ },
  {
    name: 'response cache folder under a file',
    argv: optAt('cache.dir', join('SKILL.md', 'responses')),
    place: /cache\.dir/,
    says: /SKILL\.md is a file/,
  },
  {
    name: 'bad price',
    argv: validate((d) => withConfig(d, 'prices:\n  sim-target:\n    input_per_mtok: cheap\n')),
    place: /prices/,
  },
  {
    name: 'missing _base_',
    argv: validate((d) => yaml(d, 'bad.yaml', '_base_: nowhere.yaml\n')),
    place: /nowhere\.yaml/,
  },
  {
    name: 'malformed base URL',
    argv: opts('model.target_backend=openai', 'model.target=m', 'model.target_base_url=htp:/bad'),
    place: /model\.target_base_url/,
    says: /not an http/,
  },
  {
    name: 'base URL of another scheme',
    argv: opts(
      'model.optimizer_backend=openai',
      'model.optimizer=m',
      'model.optimizer_base_url=ftp://example.com/v1',
    ),
    place: /model\.optimizer_base_url/,
  },
  ...(['openai', 'anthropic'] as const).map((backend): Case => ({
    name: `base URL with a user name and password (${backend})`,
    argv: opts(
      `model.target_backend=${backend}`,
      'model.target=m',
      'model.target_base_url=http://alice:s3cret-pw@127.0.0.1:9/v1',
    ),
    place: /model\.target_base_url/,
    says: /carries a user name and password.*Fix: remove the "user:password@" part and give the server's key in (OPENAI|ANTHROPIC)_API_KEY/,
    never: /alice|s3cret-pw/,
  })),
  // ── tasks ──
  { name: 'task file missing', argv: opts('env.data_path=nope.jsonl'), place: /nope\.jsonl/ },
  { name: 'no task file', argv: opts('env.data_path='), place: /env\.data_path/ },
  {
    name: 'no task file, with skill-creator evals beside the skill',
    setup: (d) => evalsNaming(d, 'stamp.txt'),
    argv: opts('env.data_path='),
    place: /env\.data_path/,
    says: /Fix: set env\.data_path: \S+\/evals\/evals\.json \(the skill-creator evals in your skill folder/,
  },
  {
    name: 'task file not JSON',
    setup: (d) => writeFileSync(join(d, 't.jsonl'), 'this is not json\n'),
    argv: optAt('env.data_path', 't.jsonl'),
    place: /t\.jsonl/,
    says: /:1: Line is not valid JSON/,
  },
  {
    name: 'task file not UTF-8',
    setup: (d) => writeFileSync(join(d, 't.jsonl'), Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a])),
    argv: optAt('env.data_path', 't.jsonl'),
    place: /t\.jsonl/,
    says: /:1: Task file is not valid UTF-8 text/,
  },
  {
    name: 'task file empty',
    setup: (d) => writeFileSync(join(d, 't.jsonl'), ''),
    argv: optAt('env.data_path', 't.jsonl'),
    place: /t\.jsonl/,
    says: /Task file is empty/,
  },
  {
    name: 'task without an answer',
    setup: (d) => writeFileSync(join(d, 't.jsonl'), '{"id":"a","question":"q"}\n'.repeat(20)),
    argv: optAt('env.data_path', 't.jsonl'),
    place: /t\.jsonl/,
    says: /Task "a" has no expected answer/,
  },
  {
    name: 'task file is a YAML alias bomb',
    setup: (d) => writeFileSync(join(d, 't.yaml'), `${aliasBomb}tests:\n  - vars: {prompt: q}\n`),
    argv: optAt('env.data_path', 't.yaml'),
    place: /t\.yaml/,
    says: /alias bomb.*Fix: write the repeated values out/,
  },
  {
    name: 'split folder without train/',
    setup: (d) => mkdirSync(join(d, 'splits', 'val'), { recursive: true }),
    argv: (d) => [...optAt('env.split_dir', 'splits')(d), 'env.split_mode=split_dir'],
    place: /splits/,
    says: /Split folder has no train\/ subfolder/,
  },
  {
    name: 'split file not JSON',
    setup: (d) => {
      for (const s of ['train', 'val', 'test']) {
        mkdirSync(join(d, 'splits', s), { recursive: true });
        writeFileSync(
          join(d, 'splits', s, 'items.json'),
          s === 'val' ? '{not json' : '[{"id":"a","input":"q","answer":"x"}]',
        );
      }
    },
    argv: (d) => [...optAt('env.split_dir', 'splits')(d), 'env.split_mode=split_dir'],
    place: /val/,
    says: /items\.json:1: Task file is not valid JSON/,
  },
  // ── the skill ──
  {
    name: 'skill missing (from --cfg-options)',
    argv: opts('env.skill_init=missing.md'),
    place: /--cfg-options \(env\.skill_init\)/,
    says: /relative to the working folder \(/,
  },
  {
    name: 'skill missing (from the config file)',
    argv: validate((d) => withConfig(d, '')),
    setup: (d) => rmSync(join(d, 'SKILL.md')),
    place: /bad\.yaml:\d+ \(env\.skill_init\)/,
    says: /relative to the config file that sets it/,
  },
  {
    name: 'skill is a folder without SKILL.md',
    setup: (d) => mkdirSync(join(d, 'empty')),
    argv: (d) => [
      'validate',
      join(d, 'skillopt.yaml'),
      '--cfg-options',
      `env.skill_init=${join(d, 'empty')}`,
    ],
    place: /env\.skill_init/,
  },
  {
    name: 'skill is binary',
    setup: (d) => writeFileSync(join(d, 'b.md'), Buffer.from([0, 1, 2, 0xff, 0xfe, 0])),
    argv: optAt('env.skill_init', 'b.md'),
    place: /b\.md/,
    says: /the skill is not a text file \(it contains NUL bytes\)/,
  },
  {
    name: 'skill is a data file (the task file by mistake)',
    argv: optAt('env.skill_init', 'tasks.jsonl'),
    place: /tasks\.jsonl \(env\.skill_init\)/,
    says: /the skill is a \.jsonl file, not Markdown/,
  },
  { name: 'skill too large', argv: opts('env.max_skill_bytes=10'), place: /SKILL\.md|max_skill_bytes/ },
  {
    name: 'skill folder with a link out of it',
    setup: (d) => {
      mkdirSync(join(d, 'linked', 'references'), { recursive: true });
      writeFileSync(join(d, 'linked', 'SKILL.md'), '# Skill\n');
      symlinkSync('/usr', join(d, 'linked', 'references', 'usr'));
    },
    argv: (d) => [
      'validate',
      join(d, 'skillopt.yaml'),
      '--cfg-options',
      `env.skill_init=${join(d, 'linked')}`,
    ],
    place: /linked/,
    says: /symbolic link: references\/usr/,
  },
  // ── eval and apply-edits ──
  {
    name: 'eval with a missing skill',
    argv: (d) => ['eval', join(d, 'skillopt.yaml'), '--skill', join(d, 'nope.md'), '--out', join(d, 'e')],
    place: /nope\.md/,
  },
  // eval --skill is checked as env.skill_init is: its text would go in every target prompt.
  {
    name: 'eval with a binary skill',
    setup: (d) => writeFileSync(join(d, 'b.md'), Buffer.from([0, 1, 2, 0xff, 0xfe, 0])),
    argv: (d) => ['eval', join(d, 'skillopt.yaml'), '--skill', join(d, 'b.md'), '--out', join(d, 'e')],
    place: /b\.md \(--skill\)/,
    says: /not a text file \(it contains NUL bytes\)\. Fix: point --skill at/,
  },
  {
    name: 'eval with a skill that is not UTF-8',
    setup: (d) => writeFileSync(join(d, 'l.md'), Buffer.from('# Skill\ncaf\xe9\n', 'latin1')),
    argv: (d) => ['eval', join(d, 'skillopt.yaml'), '--skill', join(d, 'l.md'), '--out', join(d, 'e')],
    place: /l\.md:2 \(--skill\)/,
    says: /not UTF-8/,
  },
  {
    name: 'eval with a skill over env.max_skill_bytes',
    argv: (d) => [
      'eval',
      join(d, 'skillopt.yaml'),
      '--skill',
      join(d, 'SKILL.md'),
      '--out',
      join(d, 'e'),
      '--cfg-options',
      'env.max_skill_bytes=10',
    ],
    place: /SKILL\.md \(--skill\)/,
    says: /over env\.max_skill_bytes \(10\)/,
  },
  {
    name: "eval --out a folder of the person's own (beside the config)",
    argv: (d) => ['eval', join(d, 'skillopt.yaml'), '--skill', join(d, 'SKILL.md'), '--out', d],
    place: /cfg\b/,
    says: /the folder holds files but no run \(SKILL\.md, .*an evaluation writes eval_summary\.json/,
  },
  {
    name: 'eval without --skill',
    argv: (d) => ['eval', join(d, 'skillopt.yaml'), '--out', join(d, 'e')],
    place: /--skill/,
  },
  {
    name: 'eval with a folder without SKILL.md as skill',
    setup: (d) => mkdirSync(join(d, 'empty')),
    argv: (d) => ['eval', join(d, 'skillopt.yaml'), '--skill', join(d, 'empty'), '--out', join(d, 'e')],
    place: /--skill|folder/,
  },
  {
    name: 'eval of an unknown split',
    argv: (d) => [
      'eval',
      join(d, 'skillopt.yaml'),
      '--skill',
      join(d, 'SKILL.md'),
      '--split',
      'bogus',
      '--out',
      join(d, 'e'),
    ],
    place: /--split/,
  },
  {
    name: 'apply-edits with a missing edits file',
    argv: (d) => ['apply-edits', '--skill', join(d, 'SKILL.md'), '--edits', join(d, 'nope.json')],
    place: /nope\.json/,
  },
  {
    name: 'apply-edits with edits that are not JSON',
    setup: (d) => writeFileSync(join(d, 'e.json'), '{nope'),
    argv: (d) => ['apply-edits', '--skill', join(d, 'SKILL.md'), '--edits', join(d, 'e.json')],
    place: /e\.json/,
  },
  // ── the user's own eval files ──
  {
    name: 'an eval file with an assertion SkillOpt cannot run',
    argv: (d) => [
      'validate',
      join(d, 'skillopt.yaml'),
      '--cfg-options',
      `env.data_path=${join(evalFixtures, 'promptfoo', 'refused.yaml')}`,
    ],
    place: /refused\.yaml:7 \(assert\[1\]\)/,
    says: /Assertion "javascript" cannot be scored: it runs code from the eval file.*Fix: move the check into a scorer module or command/,
  },
  {
    name: 'a binary input file for a chat target',
    setup: (d) => {
      mkdirSync(join(d, 'evals'), { recursive: true });
      writeFileSync(join(d, 'stamp.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1]));
      writeFileSync(
        join(d, 'evals', 'evals.json'),
        JSON.stringify({
          evals: [1, 2, 3, 4, 5, 6].map((id) => ({
            id,
            prompt: `Task ${id}`,
            expectations: ['It answers'],
            files: ['stamp.png'],
          })),
        }),
      );
    },
    argv: (d) => [
      'validate',
      join(d, 'skillopt.yaml'),
      '--cfg-options',
      `env.data_path=${join(d, 'evals', 'evals.json')}`,
    ],
    place: /stamp\.png/,
    says: /binary input file stamp\.png, which a chat target cannot read.*Fix: use an agent target/,
  },
  ...(
    [
      [
        'an absolute path',
        () => '/etc/hostname',
        /is an absolute path; input files must be inside the skill folder/,
      ],
      [
        'a path leading out with ..',
        () => '../../../../../../../../etc/hostname',
        /leads out of the skill folder/,
      ],
      [
        'a symbolic link out of the skill folder',
        (d: string) => {
          mkdirSync(join(d, 'evals', 'files'), { recursive: true });
          symlinkSync('/etc/hostname', join(d, 'evals', 'files', 'host.txt'));
          return 'evals/files/host.txt';
        },
        /is a symbolic link leading out of the skill folder/,
      ],
    ] as const
  ).map(([what, file, says]): Case => ({
    name: `an eval input file given as ${what}`,
    setup: (d) => evalsNaming(d, file(d)),
    argv: (d) => [
      'validate',
      join(d, 'skillopt.yaml'),
      '--cfg-options',
      `env.data_path=${join(d, 'evals', 'evals.json')}`,
    ],
    place: /evals\.json:\d+ \(evals\[0\]\.files\[0\]\)/,
    says: new RegExp(`${says.source}.*Fix: copy the file into`),
  })),
  {
    name: 'a task image outside the task, config and working folders',
    setup: (d) => {
      writeFileSync(join(d, '..', 'secret.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
      writeFileSync(
        join(d, 't.jsonl'),
        Array.from({ length: 10 }, (_, i) =>
          JSON.stringify({ id: `t${i}`, question: 'q', answer: 'a', image_path: '../secret.png' }),
        ).join('\n'),
      );
    },
    argv: (d) => [
      'validate',
      join(d, 'skillopt.yaml'),
      '--cfg-options',
      `env.data_path=${join(d, 't.jsonl')}`,
    ],
    place: /t\.jsonl:1/,
    says: /lies outside the task file's folder/,
  },
  {
    name: 'apply-edits without --edits',
    argv: (d) => ['apply-edits', '--skill', join(d, 'SKILL.md')],
    place: /--edits/,
  },
];

/** A skill-creator `evals/evals.json` in the case folder whose evals give `file` as their input file. */
function evalsNaming(d: string, file: string): void {
  mkdirSync(join(d, 'evals'), { recursive: true });
  const evals = [1, 2, 3, 4, 5, 6].map((id) => ({
    id,
    prompt: `Task ${id}`,
    expectations: ['It answers'],
    files: [file],
  }));
  writeFileSync(join(d, 'evals', 'evals.json'), JSON.stringify({ evals }, null, 2));
}

/** One message naming the place and the fix, exit 1 or 2, no stack trace. */
function assertOneMessage(c: Pick<Case, 'name' | 'place' | 'says' | 'never'>, r: CliOutput): void {
  const all = `${r.stdout}${r.stderr}`;
  const context = `${c.name}: exit ${r.code}\n${all}`;
  assert.ok(r.code === 1 || r.code === 2, context);
  assert.doesNotMatch(all, /^\s+at .+[:(]\d+/m, `stack trace in ${context}`);
  assert.doesNotMatch(all, /unexpected error/, context);
  const messages = r.stderr.split('\n').filter((l) => l.startsWith('skillopt: '));
  assert.equal(messages.length, 1, context);
  // Besides it, only the log's own lines (`[error] llm: ...` for each failed call).
  const others = r.stderr.split('\n').filter((l) => l.trim() && l !== messages[0] && !/^\[\w+\] /.test(l));
  assert.deepEqual(others, [], `more than one message in ${context}`);
  assert.match(messages[0], /\. Fix: \S/, `no fix in ${context}`);
  assert.match(messages[0], c.place, `place not named in ${context}`);
  if (c.says) assert.match(messages[0], c.says, context);
  if (c.never) assert.doesNotMatch(all, c.never, context);
}

describe('bad input: one message with the place and the fix, no stack trace', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  let d: string;
  const keys = ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY'] as const;
  const saved = keys.map((k) => process.env[k]);
  beforeEach(() => {
    tmp = tempDir('skillopt-bad-');
    d = join(tmp.path, 'cfg');
    cpSync(example, d, { recursive: true });
    for (const k of keys) process.env[k] = 'test-key-not-real';
  });
  afterEach(() => {
    keys.forEach((k, i) => {
      if (saved[i] === undefined) delete process.env[k];
      else process.env[k] = saved[i];
    });
    tmp.cleanup();
  });

  for (const c of CASES) {
    it(c.name, async () => {
      c.setup?.(d);
      assertOneMessage(c, await cli(c.argv(d)));
    });
  }

  it('a skill whose front matter is a YAML alias bomb: the front-matter warning, no trace', async () => {
    writeFileSync(join(d, 'SKILL.md'), `---\nname: x\ndescription: y\n${aliasBomb}---\n# Skill\n`);
    const r = await cli(['validate', join(d, 'skillopt.yaml')]);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /^\s+at .+[:(]\d+/m);
    assert.match(r.stdout + r.stderr, /SKILL\.md:2:1: front matter is not valid YAML \(.*alias bomb/);
  });

  // A FIFO or a device where a file is expected: refused, never read (a read would wait forever).
  const notFiles: Array<[string, (d: string, fifo: string) => string[], RegExp, RegExp]> = [
    [
      'skill',
      (d, f) => ['validate', join(d, 'skillopt.yaml'), '--cfg-options', `env.skill_init=${f}`],
      /env\.skill_init/,
      /the skill is a FIFO/,
    ],
    [
      'task file',
      (d, f) => ['validate', join(d, 'skillopt.yaml'), '--cfg-options', `env.data_path=${f}`],
      /fifo/,
      /Data file is a FIFO/,
    ],
    ['config', (_d, f) => ['validate', f], /fifo/, /is a FIFO \(named pipe\), not a config file/],
    [
      'eval --skill',
      (d, f) => ['eval', join(d, 'skillopt.yaml'), '--skill', f, '--out', join(d, 'e')],
      /fifo/,
      /skill file is a FIFO/,
    ],
    [
      '--edits',
      (d, f) => ['apply-edits', '--skill', join(d, 'SKILL.md'), '--edits', f],
      /fifo/,
      /edits file is a FIFO/,
    ],
  ];
  for (const [what, argv, place, says] of notFiles) {
    it(`a FIFO as the ${what}`, async function () {
      const fifo = join(d, 'fifo');
      try {
        execFileSync('mkfifo', [fifo], { stdio: 'ignore' });
      } catch {
        this.skip();
      }
      assertOneMessage({ name: `FIFO ${what}`, place, says }, await cli(argv(d, fifo)));
    });
  }
  it('a device as the skill', async () => {
    const r = await cli(['validate', join(d, 'skillopt.yaml'), '--cfg-options', 'env.skill_init=/dev/zero']);
    assertOneMessage(
      { name: 'device skill', place: /\/dev\/zero \(env\.skill_init\)/, says: /the skill is a device/ },
      r,
    );
  });

  it('a read-only out folder', async function () {
    const ro = join(tmp.path, 'ro');
    if (!mountTmpfs(ro, 'ro,size=1m')) this.skip();
    try {
      const r = await cli(['train', join(d, 'skillopt.yaml'), '--out', join(ro, 'run')]);
      assertOneMessage({ name: 'read-only', place: /ro\/run/, says: /read-only/ }, r);
    } finally {
      execFileSync('umount', [ro]);
    }
  });

  it('a full disk', async function () {
    const full = join(tmp.path, 'full');
    if (!mountTmpfs(full, 'size=64k')) this.skip();
    try {
      writeFileSync(join(full, 'filler'), Buffer.alloc(40 * 1024));
      const r = await cli(['train', join(d, 'skillopt.yaml'), '--out', join(full, 'run')]);
      assertOneMessage({ name: 'disk full', place: /full\/run/, says: /disk is full/ }, r);
    } finally {
      execFileSync('umount', [full]);
    }
  });

  it('a disk that fills up mid-run: resumed while full, one message; with space again, the run ends', async function () {
    const full = join(tmp.path, 'midrun');
    if (!mountTmpfs(full, 'size=400k')) this.skip();
    try {
      const argv = [
        'train',
        join(d, 'skillopt.yaml'),
        '--out',
        join(full, 'run'),
        '--cfg-options',
        'train.num_epochs=1',
      ];
      const first = await cli(argv);
      assertOneMessage({ name: 'disk fills mid-run', place: /midrun\/run/, says: /disk is full/ }, first);
      assert.ok(existsSync(join(full, 'run', 'config.json')), 'the disk filled before the run started');
      // The lock is the first write of a resume.
      assertOneMessage(
        { name: 'resume on a full disk', place: /midrun\/run/, says: /disk is full/ },
        await cli([...argv, '--resume']),
      );
      execFileSync('mount', ['-o', 'remount,size=20m', full]);
      // No row cut short by the full disk is left in the ledger for the resume to refuse.
      const resumed = await cli([...argv, '--resume']);
      assert.equal(resumed.code, 0, resumed.stderr);
    } finally {
      execFileSync('umount', [full]);
    }
  });

  it('a resume on a disk with no byte left: the lock cannot be written, one message', async function () {
    const full = join(tmp.path, 'nobyte');
    if (!mountTmpfs(full, 'size=64k')) this.skip();
    try {
      const run = join(full, 'run');
      mkdirSync(run);
      // A started run: its ledger (written first) and its config.
      writeFileSync(join(run, 'ledger.jsonl'), '');
      writeFileSync(join(run, 'config.json'), '{}');
      try {
        writeFileSync(join(full, 'filler'), Buffer.alloc(128 * 1024));
      } catch {
        // ENOSPC: the disk is now full to the last byte.
      }
      const r = await cli(['train', join(d, 'skillopt.yaml'), '--out', run, '--resume']);
      assertOneMessage({ name: 'no byte left', place: /nobyte\/run/, says: /disk is full/ }, r);
    } finally {
      execFileSync('umount', [full]);
    }
  });

  // The provider's context-limit 400, over both SDK wires: named as such, with the fix, not retried.
  const overflow: Array<[string, string, (script: Script) => Promise<LoopbackServer>, string]> = [
    [
      'OpenAI',
      'openai',
      startOpenAiServer,
      "This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens.",
    ],
    ['Anthropic', 'anthropic', startAnthropicServer, 'prompt is too long: 210000 tokens > 200000 maximum'],
  ];
  for (const [wire, backend, start, message] of overflow) {
    it(`a context-limit 400 (${wire} wire)`, async () => {
      const server = await start(() => ({ kind: 'status', status: 400, message }));
      try {
        const r = await cli([
          'train',
          join(d, 'skillopt.yaml'),
          '--out',
          join(tmp.path, 'run'),
          '--cfg-options',
          `model.target_backend=${backend}`,
          'model.target=m',
          `model.target_base_url=${server.url}`,
          'cache.enabled=false',
        ]);
        assertOneMessage(
          { name: wire, place: /m\b/, says: /the prompt is longer than the model's context/ },
          r,
        );
        assert.match(r.stderr, /Fix: .*longer context/);
      } finally {
        await server.close();
      }
    });
  }
});
