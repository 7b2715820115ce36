import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cliEntry } from '../../support/cliProcess';
import { waitUntilDead } from '../../support/processes';

/**
 * A run whose agent target is mid-task when the process is told to stop in a way that leaves it no
 * time (a second Ctrl-C), or by a signal Node would otherwise die of (a closed terminal's SIGHUP,
 * a kill's SIGTERM): the agent's whole process group is ended and its task folder removed, not left
 * running (and spending) in the background with a home full of copied credentials in tmp.
 */
const root = resolve(__dirname, '..', '..', '..');
const fakeAgent = join(root, 'test', 'fixtures', 'fakecli', 'fakeAgent.cjs');

/**
 * The target: a custom command that hangs, or (`claude`) the Claude Code preset running a stand-in
 * that streams one reply with its usage first (an agent stopped after spending tokens).
 */
function targetLines(dir: string, pidFile: string, target: 'command' | 'claude'): string[] {
  if (target === 'command')
    return [
      '  target_backend: command',
      // Ignores SIGTERM, as does the helper it starts: only a SIGKILL of its group ends them.
      `  target_command: ${JSON.stringify(`${process.execPath} ${fakeAgent} hang ${pidFile}`)}`,
    ];
  const program = join(dir, 'claude');
  writeFileSync(
    program,
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(fakeAgent)} claude-spend-hang ${JSON.stringify(pidFile)}\n`,
    { mode: 0o755 },
  );
  return ['  target_backend: claude_code_exec', `  claude_code_exec_path: ${JSON.stringify(program)}`];
}

function writeProject(dir: string, pidFile: string, target: 'command' | 'claude'): string {
  writeFileSync(
    join(dir, 'SKILL.md'),
    '---\nname: capitals\ndescription: Capitals.\n---\n\nAnswer briefly.\n',
  );
  writeFileSync(
    join(dir, 'tasks.jsonl'),
    ['France', 'Japan', 'Italy', 'Peru', 'Kenya', 'Norway']
      .map((c) => JSON.stringify({ id: c, question: `Capital of ${c}?`, answer: c }))
      .join('\n') + '\n',
  );
  const config = join(dir, 'skillopt.yaml');
  writeFileSync(
    config,
    [
      'model:',
      '  optimizer_backend: openai',
      '  optimizer: gpt-4.1-mini',
      // Never reached: the target never answers.
      '  optimizer_base_url: http://127.0.0.1:9/v1',
      ...targetLines(dir, pidFile, target),
      `  target_workspace_root: ${JSON.stringify(join(dir, 'agents'))}`,
      'env:',
      '  skill_init: SKILL.md',
      '  data_path: tasks.jsonl',
      '  split_mode: ratio',
      '  split_ratio: "2:2:2"',
      '  scorer: exact',
      '  exec_timeout: 600',
      'limits:',
      '  agent_concurrency: 1',
      '  max_retries: 0',
      'cache:',
      '  enabled: false',
      '',
    ].join('\n'),
  );
  return config;
}

/** Runs `skillopt <command>` until the agent has started, sends `signals` 200 ms apart, waits for the exit. */
async function stopMidTask(
  command: 'train' | 'eval',
  signals: NodeJS.Signals[],
  target: 'command' | 'claude' = 'command',
): Promise<{ code: number | null; output: string; helper: number; agents: string; out: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'skillopt-stop-agents-'));
  const pidFile = join(dir, 'helper.pid');
  const config = writeProject(dir, pidFile, target);
  const args =
    command === 'train'
      ? ['train', config, '--out', join(dir, 'out')]
      : ['eval', config, '--skill', join(dir, 'SKILL.md'), '--split', 'test', '--out', join(dir, 'out')];
  const child = spawn(process.execPath, [...cliEntry, ...args], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: join(dir, 'home'),
      OPENAI_API_KEY: 'sk-fake',
      ANTHROPIC_API_KEY: 'sk-ant-fake',
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const closed = new Promise<number | null>((r) => child.on('close', r));
  for (let i = 0; i < 1200 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(existsSync(pidFile), `the agent never started:\n${output}`);
  const helper = Number(readFileSync(pidFile, 'utf8'));
  for (const s of signals) {
    child.kill(s);
    await new Promise((r) => setTimeout(r, 200));
  }
  const code = await closed;
  return { code, output, helper, agents: join(dir, 'agents'), out: join(dir, 'out') };
}

function taskFolders(agents: string): string[] {
  mkdirSync(agents, { recursive: true });
  return readdirSync(agents).filter((n) => n.startsWith('task-'));
}

describe('cli: stopping a run mid-task ends its agents and removes their folders', function () {
  this.timeout(120_000);
  const made: string[] = [];
  after(() => {
    for (const d of made) rmSync(d, { recursive: true, force: true });
  });

  const cases: Array<{ title: string; command: 'train' | 'eval'; signals: NodeJS.Signals[] }> = [
    { title: 'train: Ctrl-C twice (quit at once)', command: 'train', signals: ['SIGINT', 'SIGINT'] },
    { title: 'train: the terminal closes (SIGHUP)', command: 'train', signals: ['SIGHUP'] },
    { title: 'eval: killed (SIGTERM)', command: 'eval', signals: ['SIGTERM'] },
  ];
  for (const c of cases) {
    it(c.title, async function () {
      if (process.platform === 'win32') this.skip();
      // SIGHUP is listened to only where the process can tell it was not ignored (nohup).
      if (c.signals.includes('SIGHUP') && !existsSync('/proc/self/status')) this.skip();
      const r = await stopMidTask(c.command, c.signals);
      made.push(resolve(r.agents, '..'));
      assert.notEqual(r.code, 0, r.output);
      assert.equal(
        await waitUntilDead(r.helper, 15_000),
        true,
        `the agent's helper ${r.helper} still runs\n${r.output}`,
      );
      assert.deepEqual(taskFolders(r.agents), [], r.output);
    });
  }

  it("train: Ctrl-C twice records the running agent's tokens so far in the ledger", async function () {
    if (process.platform === 'win32') this.skip();
    const r = await stopMidTask('train', ['SIGINT', 'SIGINT'], 'claude');
    made.push(resolve(r.agents, '..'));
    assert.notEqual(r.code, 0, r.output);
    assert.equal(await waitUntilDead(r.helper, 15_000), true, r.output);
    assert.deepEqual(taskFolders(r.agents), [], r.output);
    const rows = readFileSync(join(r.out, 'ledger.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            kind: string;
            role?: string;
            prompt_tokens?: number;
            completion_tokens?: number;
          },
      );
    const target = rows.filter((x) => x.kind === 'usage' && x.role === 'target');
    // One agent ran (agent_concurrency 1): its streamed reply, recorded once as the process exited.
    assert.deepEqual(
      target.map((x) => [x.prompt_tokens, x.completion_tokens]),
      [[1234, 56]],
      r.output,
    );
  });
});
