import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { SmokeResult } from '../../../src/engine/smoke';
import { agentCliBin } from '../../support/agentClis';
import { agentModel } from '../../support/loopback/agentModel';
import { startAnthropicServer } from '../../support/loopback/anthropicServer';
import { reply, status, type LoopbackServer, type Reply } from '../../support/loopback/core';
import { lastUserText, startOpenAiServer } from '../../support/loopback/openaiServer';

/**
 * `skillopt validate --smoke` as a user runs it (a child process), against loopback servers and
 * the real Claude Code CLI. The CLI must not block the test's event loop: the servers live here.
 */
const root = join(__dirname, '..', '..', '..');
const example = join(root, 'examples', 'house-style');

/** Variables that would point the child at this machine's programs, keys or run folders. */
const SCRUBBED = [
  'CLAUDE_CODE_EXEC_PATH',
  'CODEX_EXEC_PATH',
  'COPILOT_EXEC_PATH',
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'AZURE_OPENAI_API_KEY',
  'SKILLOPT_SIM_LATENCY_MS',
];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const k of SCRUBBED) delete childEnv[k];
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts'), ...args], {
    cwd: root,
    env: { ...childEnv, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe('skillopt validate --smoke', function () {
  this.timeout(60_000);
  let dir: string;
  /** The child's TMPDIR: the throwaway folder goes here and must be gone afterwards. */
  let tmp: string;
  let optimizer: LoopbackServer;
  let target: LoopbackServer;
  let targetReply: (req: Parameters<typeof lastUserText>[0]) => Reply;
  const answers = new Map<string, string>();

  before(async () => {
    for (const line of readFileSync(join(example, 'tasks.jsonl'), 'utf8').trim().split('\n')) {
      const t = JSON.parse(line) as { question: string; answer: string };
      answers.set(t.question, t.answer);
    }
    optimizer = await startOpenAiServer(() => reply('{}'));
    target = await startOpenAiServer((req) => targetReply(req));
  });
  after(async () => {
    await optimizer?.close();
    await target?.close();
  });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-smoke-cli-'));
    cpSync(example, join(dir, 'cfg'), { recursive: true });
    tmp = join(dir, 'tmp');
    mkdirSync(tmp);
    optimizer.requests.length = 0;
    target.requests.length = 0;
    // A target that knows every answer: it answers the question it was asked, in the answer tag.
    targetReply = (req) => {
      const text = lastUserText(req);
      const hit = [...answers.entries()].find(([q]) => text.includes(q));
      return reply(`<answer>${hit ? hit[1] : 'no idea'}</answer>`);
    };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const openAiSmoke = (...extra: string[]): Promise<Run> =>
    cli(
      [
        'validate',
        join(dir, 'cfg', 'skillopt.yaml'),
        '--smoke',
        ...extra,
        '--cfg-options',
        'model.optimizer_backend=openai',
        'model.optimizer=loopback-optimizer',
        `model.optimizer_base_url=${optimizer.url}`,
        'model.target_backend=openai',
        'model.target=loopback-target',
        `model.target_base_url=${target.url}`,
        `cache.dir=${join(dir, 'cache')}`,
      ],
      { OPENAI_API_KEY: 'fake-loopback-key', TMPDIR: tmp },
    );

  /** Nothing of a run was written, the response cache was not used, the throwaway folder is gone. */
  const assertNothingLeft = (): void => {
    assert.ok(!existsSync(join(dir, 'cfg', '.skillopt')), 'a run folder was written');
    assert.ok(!existsSync(join(dir, 'cache')), 'the response cache was written');
    // tsx, which runs the CLI from source here, keeps its compile cache in TMPDIR.
    assert.deepEqual(
      readdirSync(tmp).filter((f) => !f.startsWith('tsx-')),
      [],
    );
  };

  it('runs one train task through an OpenAI target and shows the answer and the score (exit 0)', async () => {
    const r = await openAiSmoke();
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Config .*: OK/);
    assert.match(r.stdout, /Smoke run: train task distance-008/);
    assert.match(r.stdout, /target {4}openai_compatible loopback-target/);
    assert.match(r.stdout, /answered {2}predicted "42\.16 km", expected "42\.16 km"/);
    assert.match(r.stdout, /score {5}hard 1, soft 1\.00/);
    assert.match(r.stdout, /cost {6}1 target call, 0 optimizer calls, \d+ prompt \+ \d+ completion tokens/);
    assert.doesNotMatch(r.stdout, /skill {5}(loaded|NOT)/, 'a chat model has no skill-loading trace');
    assert.equal(target.requests.length, 1);
    assert.equal(optimizer.requests.length, 0);
    assertNothingLeft();

    const j = await openAiSmoke('--json');
    assert.equal(j.code, 0, j.stderr);
    const out = JSON.parse(j.stdout) as { splits: { train: number }; smoke: SmokeResult };
    assert.equal(out.splits.train, 25);
    assert.equal(out.smoke.outcome, 'answered');
    assert.equal(out.smoke.hard, 1);
    assert.deepEqual(out.smoke.expected, ['42.16 km']);
    assert.equal(out.smoke.cost.target_calls, 1);
    assert.ok(out.smoke.cost.prompt_tokens > 0);
    assert.equal(optimizer.requests.length, 0);
  });

  it('exits 0 on a wrong answer: that is the skill’s to fix', async () => {
    targetReply = () => reply('<answer>41 km</answer>');
    const r = await openAiSmoke('--json');
    assert.equal(r.code, 0, r.stderr);
    const { smoke } = JSON.parse(r.stdout) as { smoke: SmokeResult };
    assert.equal(smoke.outcome, 'answered');
    assert.equal(smoke.predicted, '41 km');
    assert.equal(smoke.hard, 0);
  });

  it('exits 1 on a 401, naming the cause and the fix, without a single optimizer request', async () => {
    targetReply = () => status(401, 'Incorrect API key provided');
    const r = await openAiSmoke();
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /errored {3}not authorised \(check the key\) \[auth\]: .*401 Incorrect API key/);
    assert.match(r.stdout, /fix {7}check the API key \(OPENAI_API_KEY or/);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(
      lines[0],
      /^skillopt: smoke task distance-008: .*not authorised.*\[auth\].*Fix: check the API key/,
    );
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    // A 401 fails the same way again: not retried.
    assert.equal(target.requests.length, 1);
    assert.equal(optimizer.requests.length, 0);
    assertNothingLeft();

    // --json: one object on stdout with the report, the smoke result and the error; stderr quiet.
    const j = await openAiSmoke('--json');
    assert.equal(j.code, 1, j.stdout + j.stderr);
    assert.equal(j.stderr, '');
    assert.equal(j.stdout.trim().split('\n').length, 1, j.stdout);
    const out = JSON.parse(j.stdout) as {
      smoke: SmokeResult;
      error: { reason: string; message: string; fix?: string };
    };
    assert.equal(out.smoke.outcome, 'errored');
    assert.equal(out.error.reason, 'target');
    assert.match(out.error.message, /^smoke task distance-008: .*not authorised.*\[auth\]/);
    assert.match(out.error.fix ?? '', /^check the API key/);
  });

  describe('agent targets', () => {
    const { bin, missing } = agentCliBin();
    // Claude Code's model: loads the skill when its description matches, answers by its rule.
    let anthropic: LoopbackServer;
    before(async () => {
      anthropic = await startAnthropicServer(
        agentModel({ wire: 'anthropic', skillName: 'capitals', rule: 'RULE-7', trigger: /capital/i }),
      );
    });
    after(async () => anthropic?.close());

    it('--smoke with a missing agent program exits 1 before anything runs', async () => {
      const r = await cli(
        [
          'validate',
          join(dir, 'cfg', 'skillopt.yaml'),
          '--smoke',
          '--cfg-options',
          'model.target_backend=claude_code_exec',
          `model.claude_code_exec_path=${join(dir, 'no-such-dir', 'claude')}`,
          `model.target_base_url=${target.url}`,
        ],
        { TMPDIR: tmp },
      );
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.equal(r.stdout, '', 'no report and no smoke run');
      assert.match(
        r.stderr,
        /^skillopt: model\.claude_code_exec_path: Claude Code .* was not found on PATH\. Fix: /,
      );
      assert.equal(target.requests.length, 0);
      assertNothingLeft();
    });

    if (missing) it(`pending: the real Claude Code smoke run (${missing})`);

    it('runs one task through the real Claude Code CLI: answer, score, skill loaded, tokens', async function () {
      if (!bin) this.skip();
      this.timeout(120_000);
      const cfg = join(dir, 'capitals');
      mkdirSync(cfg);
      writeFileSync(
        join(cfg, 'SKILL.md'),
        '---\nname: capitals\ndescription: Use when answering questions about capital cities.\n---\n\n# Capitals\n\nRULE-7: write the city name in UPPERCASE.\n',
      );
      const countries = ['France', 'Japan', 'Italy', 'Peru', 'Kenya', 'Norway'];
      const capitals = ['PARIS', 'TOKYO', 'ROME', 'LIMA', 'NAIROBI', 'OSLO'];
      writeFileSync(
        join(cfg, 'tasks.jsonl'),
        countries
          .map((c, i) =>
            JSON.stringify({ id: `cap-${i}`, question: `What is the capital of ${c}?`, answer: capitals[i] }),
          )
          .join('\n') + '\n',
      );
      writeFileSync(
        join(cfg, 'skillopt.yaml'),
        [
          'model:',
          '  optimizer_backend: openai',
          '  optimizer: loopback-optimizer',
          `  optimizer_base_url: ${optimizer.url}`,
          '  target_backend: claude_code_exec',
          '  target: loopback-target-model',
          `  target_base_url: ${anthropic.url}`,
          `  target_workspace_root: ${join(dir, 'agents')}`,
          'env:',
          '  skill_init: SKILL.md',
          '  data_path: tasks.jsonl',
          '  split_ratio: "4:1:1"',
          '  scorer: exact',
          '  exec_timeout: 60',
          `cache:\n  dir: ${join(dir, 'cache')}`,
          '',
        ].join('\n'),
      );
      const home = join(dir, 'home');
      mkdirSync(home);
      const r = await cli(['validate', join(cfg, 'skillopt.yaml'), '--smoke', '--json'], {
        PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
        HOME: home,
        ANTHROPIC_API_KEY: 'fake-anthropic-loopback-key',
        OPENAI_API_KEY: 'fake-optimizer-loopback-key',
        TMPDIR: tmp,
      });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const { smoke } = JSON.parse(r.stdout) as { smoke: SmokeResult };
      assert.equal(smoke.outcome, 'answered');
      assert.match(smoke.target, /^Claude Code agent CLI loopback-target-model/);
      assert.equal(smoke.predicted, smoke.expected[0]);
      assert.equal(smoke.hard, 1);
      assert.equal(smoke.skill_loaded, true);
      assert.equal(smoke.agent?.name, 'claude');
      assert.equal(smoke.cost.target_calls, 1);
      assert.equal(smoke.cost.optimizer_calls, 0);
      assert.ok(smoke.cost.prompt_tokens > 100, `${smoke.cost.prompt_tokens} prompt tokens`);
      assert.ok(anthropic.requests.length >= 2, `${anthropic.requests.length} model requests`);
      assert.equal(optimizer.requests.length, 0);
      assert.deepEqual(
        readdirSync(join(dir, 'agents')).filter((f) => f.startsWith('task-')),
        [],
      );
      assert.ok(!existsSync(join(cfg, '.skillopt')), 'a run folder was written');
      assert.ok(!existsSync(join(dir, 'cache')), 'the response cache was written');
    });
  });
});
