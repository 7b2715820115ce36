import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';
import {
  AgentRunError,
  CommandBackend,
  renderPrompt,
  renderSkillFile,
  splitCommand,
  type CommandBackendOptions,
} from '../../../src/engine/llm/command';
import type { ChatRequest } from '../../../src/engine/llm/types';
import { waitUntilDead } from '../../support/processes';

const fakeAgent = resolve(__dirname, '../../fixtures/fakecli/fakeAgent.cjs');

function request(prompt: string, skill: string, taskId = 't1'): ChatRequest {
  return {
    role: 'target',
    stage: 'rollout',
    messages: [{ role: 'user', content: prompt }],
    task: { taskId, skill, skillName: 'capitals', prompt },
  };
}

describe('llm/command splitCommand and presets', () => {
  it('splits shell-style with quotes and escapes', () => {
    assert.deepEqual(splitCommand(`agent -p {prompt} 'a b' "c \\"d\\" $HOME" e\\ f ''`), [
      'agent',
      '-p',
      '{prompt}',
      'a b',
      'c "d" $HOME',
      'e f',
      '',
    ]);
  });

  it('keeps Windows-style backslashes literal', () => {
    assert.deepEqual(splitCommand('C:\\tools\\agent.exe --task {task_file}'), [
      'C:\\tools\\agent.exe',
      '--task',
      '{task_file}',
    ]);
  });

  it('refuses shell syntax, unterminated quotes and empty commands', () => {
    const reasons = (cmd: string): string => {
      try {
        splitCommand(cmd);
      } catch (e) {
        assert.ok(SkillOptError.is(e, 'config'));
        return e.problem;
      }
      return 'no error';
    };
    assert.equal(reasons('claude -p "$(cat task.md)"'), 'Command substitution "$(...)" is not supported');
    assert.equal(
      reasons('cat task.md | agent'),
      '"|" in the target command needs a shell, which is not used',
    );
    assert.equal(reasons('agent > out.txt'), '">" in the target command needs a shell, which is not used');
    assert.equal(reasons("agent 'open"), "Unterminated single quote in target command: agent 'open");
    assert.equal(reasons('   '), 'The target command is empty');
  });

  it('renders the prompt natively (task only) or with a pointer line', () => {
    const task = { taskId: 't', skill: 's', skillName: 'caps', prompt: 'What?' };
    assert.equal(renderPrompt(task, 'native', '.claude/skills'), 'What?');
    assert.equal(
      renderPrompt(task, 'pointer', '.claude/skills'),
      'Use the skill in .claude/skills/caps/SKILL.md. The task is also saved in task.md.\n\nWhat?',
    );
  });

  it('renders SKILL.md with name and description front matter', () => {
    const text = renderSkillFile(
      { taskId: 't', skill: '# Skill\n\n- rule\n\n', skillName: 'caps', prompt: 'q' },
      'Use it: always',
    );
    assert.equal(text, '---\nname: caps\ndescription: "Use it: always"\n---\n\n# Skill\n\n- rule\n');
  });

  it("keeps a skill's own front matter, also behind a byte-order mark (which it drops) and with CRLF", () => {
    const own = '---\r\nname: caps\r\ndescription: Mine.\r\n---\r\n# Skill\r\n';
    const render = (skill: string): string =>
      renderSkillFile({ taskId: 't', skill, skillName: 'caps', prompt: 'q' }, 'Not mine');
    assert.equal(render(own), own);
    assert.equal(render(`\uFEFF${own}`), own);
  });
});

describe('llm/command CommandBackend', function () {
  this.timeout(20_000);
  let root: string;
  const signal = new AbortController().signal;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'skillopt-cmd-test-'));
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  const backend = (
    mode: string,
    extra: string[] = [],
    opts: Partial<CommandBackendOptions> = {},
  ): CommandBackend =>
    new CommandBackend({
      command: [process.execPath, fakeAgent, mode, ...extra],
      trusted: true,
      workspaceRoot: root,
      ...opts,
    });

  it('refuses to exist unless the workspace is trusted', () => {
    assert.throws(
      () => new CommandBackend({ command: ['claude'], trusted: false }),
      (e: unknown) => SkillOptError.is(e, 'untrusted') && /trust this workspace/.test(e.message),
    );
  });

  it('runs the agent in a fresh workspace with SKILL.md and task.md, then removes it', async () => {
    const b = backend('echo', ['{task_file}', '{skill_file}', '{workspace}', '{prompt}']);
    const reply = await b.call(
      request('What is the capital of France?', '# Capitals\n\nAnswer in UPPERCASE.'),
      signal,
    );
    const lines = reply.text.trim().split('\n');
    const cwd = lines[0].slice('cwd='.length);
    assert.equal(reply.trace?.outcome, 'answered');
    assert.equal(reply.trace?.skillPath, '.agents/skills/capitals/SKILL.md');
    assert.deepEqual(lines.slice(1), [
      'task_file_ok=true',
      'skill_file_ok=true',
      'workspace_ok=true',
      'prompt_ends_with_task=true',
      'prompt_is_task=true',
      'skill_dirs=capitals',
      'front_matter=true',
      'task_id=t1',
      '<answer>WHAT IS THE CAPITAL OF FRANCE?</answer>',
    ]);
    assert.ok(cwd.startsWith(root));
    assert.match(cwd, /\/task-[^/]+\/work$/);
    assert.equal(existsSync(cwd), false, 'workspace removed');
    assert.deepEqual(readdirSync(root), []);
    assert.equal(reply.model, 'node');
    assert.equal(reply.trace?.exitCode, 0);
    assert.equal(reply.trace?.signal, null);
    assert.equal(reply.trace?.timedOut, false);
    assert.equal(reply.trace?.stderr, 'thinking...\n');
    assert.equal(reply.trace?.truncated, false);
    assert.equal(typeof reply.trace?.durationMs, 'number');
    assert.equal(reply.trace?.workspace, undefined);
    assert.ok(reply.usage.promptTokens > 0 && reply.usage.completionTokens > 0);
  });

  it('installs nothing and points at nothing for an empty skill (the no-skill baseline)', async () => {
    const b = backend('echo', ['{task_file}', '{skill_file}', '{workspace}', '{prompt}'], {
      keepWorkspaces: true,
      delivery: 'pointer',
    });
    const reply = await b.call(request('2+2?', ''), signal);
    const ws = reply.trace?.workspace as string;
    assert.equal(existsSync(join(ws, '.agents')), false, 'no skill folder in the workspace');
    assert.match(reply.text, /^skill_dirs=$/m);
    assert.match(reply.text, /^prompt_is_task=true$/m, 'the task alone, no pointer line');
    rmSync(join(ws, '..'), { recursive: true, force: true });
  });

  it('accepts a command string and keeps the workspace when asked', async () => {
    const b = new CommandBackend({
      command: `${JSON.stringify(process.execPath)} '${fakeAgent}' echo {task_file} {skill_file} {workspace} {prompt}`,
      trusted: true,
      workspaceRoot: root,
      keepWorkspaces: true,
      skillName: 'override',
      model: 'fake-agent',
    });
    const reply = await b.call(request('2+2?', 'Be brief.'), signal);
    assert.match(reply.text, /<answer>2\+2\?<\/answer>/);
    assert.match(reply.text, /skill_dirs=override/);
    const ws = reply.trace?.workspace as string;
    assert.equal(readFileSync(join(ws, 'task.md'), 'utf8'), '2+2?\n');
    assert.equal(
      readFileSync(join(ws, '.agents', 'skills', 'override', 'SKILL.md'), 'utf8'),
      '---\nname: override\ndescription: Guidance for the task in this workspace, learned from earlier attempts. Read it before you start and follow it.\n---\n\nBe brief.\n',
    );
    assert.equal(reply.model, 'fake-agent');
  });

  it('reports a non-zero exit as an errored run (crash), never as an answer', async () => {
    await assert.rejects(backend('fail').call(request('q', 's'), signal), (e: unknown) => {
      assert.ok(e instanceof AgentRunError);
      assert.equal(e.kind, 'crash');
      assert.equal(e.reason, 'llm');
      assert.equal(e.transient, false);
      assert.match(e.problem, /exited with 3: boom: tool crashed/);
      assert.equal(e.trace?.exitCode, 3);
      assert.equal(e.trace?.outcome, 'errored');
      assert.equal(e.trace?.errorKind, 'crash');
      return true;
    });
    assert.deepEqual(readdirSync(root), []);
  });

  it('calls a rejected login on stderr an auth error, and a 503 a transient API error', async () => {
    await assert.rejects(
      backend('stderr-exit', ['1', 'Error: Not logged in. Please run /login']).call(
        request('q', 's'),
        signal,
      ),
      (e: unknown) => e instanceof AgentRunError && e.kind === 'auth' && !e.transient,
    );
    await assert.rejects(
      backend('stderr-exit', ['1', 'API error: 503 Service Unavailable']).call(request('q', 's'), signal),
      (e: unknown) => e instanceof AgentRunError && e.kind === 'api' && e.transient,
    );
  });

  it('kills the whole process tree on timeout, escalating to SIGKILL', async () => {
    const pidFile = join(root, 'grandchild.pid');
    const b = backend('hang', [pidFile], { timeoutMs: 2_000, killGraceMs: 300 });
    await assert.rejects(b.call(request('q', 's'), signal), (e: unknown) => {
      assert.ok(e instanceof AgentRunError);
      assert.equal(e.kind, 'timeout');
      assert.equal(e.trace?.timedOut, true);
      assert.equal(e.trace?.exitCode, null);
      assert.equal(e.trace?.signal, 'SIGKILL');
      return true;
    });
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    assert.ok(grandchild > 0);
    assert.equal(await waitUntilDead(grandchild), true, `grandchild ${grandchild} still running`);
  });

  it('kills helpers left behind after a normal exit', async () => {
    const pidFile = join(root, 'orphan.pid');
    const reply = await backend('orphan', [pidFile]).call(request('q', 's'), signal);
    assert.equal(reply.trace?.exitCode, 0);
    const orphan = Number(readFileSync(pidFile, 'utf8'));
    assert.equal(await waitUntilDead(orphan), true, `orphan ${orphan} still running`);
  });

  it('keeps head and tail of huge output and marks the cut', async () => {
    const filler = 1024 * 1024;
    const total = 'HEAD-START\n'.length + filler + '\nTAIL-END\n'.length;
    const reply = await backend('flood', [String(filler)], { maxOutputBytes: 1024 }).call(
      request('q', 's'),
      signal,
    );
    const marker = `\n[... ${total - 1024} of ${total} bytes cut here by SkillOpt ...]\n`;
    assert.equal(reply.trace?.truncated, true);
    assert.equal(reply.trace?.stdoutBytes, total);
    assert.equal(
      reply.text,
      `HEAD-START\n${'x'.repeat(512 - 11)}${marker}${'x'.repeat(512 - 10)}\nTAIL-END\n`,
    );
  });

  it('stops the agent and reports cancellation when the signal fires', async () => {
    const pidFile = join(root, 'cancel.pid');
    const controller = new AbortController();
    const b = backend('hang', [pidFile], { timeoutMs: 60_000, killGraceMs: 200 });
    const pending = b.call(request('q', 's'), controller.signal);
    for (let i = 0; i < 200 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 25));
    controller.abort();
    await assert.rejects(pending, (e: unknown) => SkillOptError.is(e, 'cancelled'));
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    assert.equal(await waitUntilDead(grandchild), true);
    assert.deepEqual(
      readdirSync(root).filter((f) => f.startsWith('task-')),
      [],
    );
  });

  it('names a missing executable in a not-installed error (reason config)', async () => {
    const b = new CommandBackend({
      command: ['skillopt-no-such-agent-xyz', '{prompt}'],
      trusted: true,
      workspaceRoot: root,
    });
    await assert.rejects(
      b.call(request('q', 's'), signal),
      (e: unknown) =>
        e instanceof AgentRunError &&
        e.kind === 'not_installed' &&
        SkillOptError.is(e, 'config') &&
        e.problem === 'The target command "skillopt-no-such-agent-xyz" was not found on PATH' &&
        e.place.key === 'model.target_command',
    );
    assert.deepEqual(readdirSync(root), []);
  });

  it('isolates the agent: fresh home and temp, allow-listed environment, nothing left behind', async () => {
    const parentEnv = {
      PATH: process.env.PATH ?? '',
      HOME: '/home/someone',
      OPENAI_API_KEY: 'fake-optimizer-key-must-not-pass',
      ANTHROPIC_API_KEY: 'fake-anthropic-key-not-for-a-custom-command',
      MY_AGENT_TOKEN: 'token-the-user-passes',
      LANG: 'C.UTF-8',
    };
    const b = backend('env', [], { parentEnv, passEnv: ['MY_AGENT_TOKEN'], env: { EXTRA: '1' } });
    const reply = await b.call(request('q', 's'), signal);
    const seen = JSON.parse(reply.text) as { env: Record<string, string>; cwd: string; files: string[] };
    const taskDir = seen.cwd.slice(0, -'/work'.length);
    assert.equal(seen.env.HOME, join(taskDir, 'home'));
    assert.equal(seen.env.TMPDIR, join(taskDir, 'tmp'));
    assert.equal(seen.env.XDG_CONFIG_HOME, join(taskDir, 'home', '.config'));
    assert.equal(seen.env.OPENAI_API_KEY, undefined);
    assert.equal(seen.env.ANTHROPIC_API_KEY, undefined);
    assert.equal(seen.env.MY_AGENT_TOKEN, 'token-the-user-passes');
    assert.equal(seen.env.LANG, 'C.UTF-8');
    assert.equal(seen.env.EXTRA, '1');
    assert.deepEqual(seen.files.sort(), ['.agents/skills/capitals/SKILL.md', 'task.md']);
    assert.equal(existsSync(taskDir), false);
  });

  it('copies the rest of a skill folder beside SKILL.md', async () => {
    const folder = join(root, 'src-skill');
    mkdirSync(join(folder, 'references'), { recursive: true });
    writeFileSync(join(folder, 'SKILL.md'), 'old');
    writeFileSync(join(folder, 'references', 'table.md'), 'capitals table');
    const reply = await backend('env', [], { skillFolder: folder, workspaceRoot: join(root, 'ws') }).call(
      request('q', 's'),
      signal,
    );
    const seen = JSON.parse(reply.text) as { files: string[] };
    assert.deepEqual(seen.files.sort(), [
      '.agents/skills/capitals/SKILL.md',
      '.agents/skills/capitals/references/table.md',
      'task.md',
    ]);
  });

  it('serves the target role only and checks the skill name', async () => {
    const b = backend('echo');
    await assert.rejects(b.call({ ...request('q', 's'), role: 'optimizer' }, signal), (e: unknown) =>
      SkillOptError.is(e, 'config'),
    );
    const bad = request('q', 's');
    bad.task = { ...bad.task!, skillName: '../escape' };
    await assert.rejects(
      b.call(bad, signal),
      (e: unknown) => SkillOptError.is(e, 'config') && e.place.key === 'model.target_skill_name',
    );
  });
});
