import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, delimiter, join } from 'node:path';
import { defaultConfig } from '../../../src/engine/config/schema';
import { SkillOptError } from '../../../src/engine/errors';
import { Accounting } from '../../../src/engine/llm/accounting';
import { AgentRunError, CommandBackend, type AgentName } from '../../../src/engine/llm/command';
import { RunLedger, type LedgerRow } from '../../../src/engine/llm/ledger';
import type { ChatRequest, TaskContext } from '../../../src/engine/llm/types';
import { silentLogger } from '../../../src/engine/log';
import { buildModels } from '../../../src/engine/models';
import { applyEdits } from '../../../src/engine/skill/applyEdits';
import { readSkillInit } from '../../../src/engine/skill/skillFile';
import { agentCliBin } from '../../support/agentClis';
import { agentModel, promptText, startWireServer, type AgentWire } from '../../support/loopback/agentModel';
import {
  hang,
  status,
  type LoopbackServer,
  type RecordedRequest,
  type Reply,
} from '../../support/loopback/core';

/**
 * The real Claude Code, Codex and Copilot CLIs (from npm, installed by scripts/install-agent-clis.mjs)
 * against loopback servers speaking the wire each uses, with streaming: Anthropic Messages, OpenAI
 * Responses, and Chat Completions (Copilot's bring-your-own-provider mode, offline).
 */
const { bin, missing } = agentCliBin();

const RULE = 'RULE-7: write the city name in UPPERCASE.';
const MATCHING = 'Use when answering questions about capital cities.';
const UNRELATED = 'Use when formatting spreadsheets.';
const OPTIMIZER_KEY = 'fake-optimizer-secret-must-never-reach-the-agent';
const MARKERS = ['HOME-INSTRUCTIONS-MARKER', 'PARENT-INSTRUCTIONS-MARKER', 'PERSONAL-SKILL-MARKER'];

const AGENTS: Array<{ agent: AgentName; wire: AgentWire; keys: Record<string, string> }> = [
  {
    agent: 'claude',
    wire: 'anthropic',
    keys: { ANTHROPIC_API_KEY: 'fake-anthropic-target-key', OPENAI_API_KEY: OPTIMIZER_KEY },
  },
  {
    agent: 'codex',
    wire: 'responses',
    keys: { OPENAI_API_KEY: 'fake-codex-target-key', ANTHROPIC_API_KEY: OPTIMIZER_KEY },
  },
  {
    agent: 'copilot',
    wire: 'chat',
    keys: { COPILOT_PROVIDER_API_KEY: 'fake-copilot-target-key', OPENAI_API_KEY: OPTIMIZER_KEY },
  },
];

function skill(description: string, withRule: boolean): string {
  return `---\nname: capitals\ndescription: ${description}\n---\n\n# Capitals\n\n${withRule ? RULE : 'Answer briefly.'}\n`;
}

function request(country: string, skillText: string): ChatRequest {
  const prompt = `What is the capital of ${country}?\n\nEnd with your final answer wrapped as <answer>...</answer>.`;
  const task: TaskContext = { taskId: `capital-${country}`, skill: skillText, skillName: 'capitals', prompt };
  return { role: 'target', stage: 'rollout', messages: [{ role: 'user', content: prompt }], task };
}

/**
 * What the CLIs could leave in the system temp folders (theirs by name), beside our own task folders:
 * other processes on the machine make other entries there, so only these names are compared.
 */
function cliTempEntries(): string[] {
  const dirs = [...new Set(['/tmp', tmpdir()])].filter((d) => existsSync(d));
  return (
    dirs
      .flatMap((d) => readdirSync(d).map((n) => join(d, n)))
      // Our tests' own folders (skillopt-claude-it-…) come and go with other test runs on the machine.
      .filter((p) => /codex|claude|copilot|^cc-/i.test(basename(p)) && !basename(p).startsWith('skillopt-'))
      .sort()
  );
}

/** Every file under `dir` with its size and mtime, to show a folder was not touched. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(`${p} ${statSync(p).size} ${statSync(p).mtimeMs}`);
    }
  };
  walk(dir);
  return out.sort();
}

for (const { agent, wire, keys } of AGENTS) {
  describe(`agent target: real ${agent} CLI against a loopback ${wire} server`, function () {
    this.timeout(120_000);
    let base: string;
    let userHome: string;
    let server: LoopbackServer;
    let override:
      ((req: RecordedRequest, normal: (req: RecordedRequest) => Reply) => Reply | undefined) | undefined;
    const signal = new AbortController().signal;

    before(async function () {
      if (!bin) {
        this.skip();
        return;
      }
      base = mkdtempSync(join(tmpdir(), `skillopt-${agent}-it-`));
      // The user's own setup, planted where each CLI would look: none of it may reach the model.
      userHome = join(base, 'user');
      for (const f of [
        '.claude/CLAUDE.md',
        '.codex/AGENTS.md',
        '.copilot/copilot-instructions.md',
        'AGENTS.md',
        'CLAUDE.md',
      ]) {
        mkdirSync(join(userHome, f, '..'), { recursive: true });
        writeFileSync(join(userHome, f), `HOME-INSTRUCTIONS-MARKER: always answer Lyon. ${f}\n`);
      }
      for (const d of [
        '.claude/skills/personal',
        '.codex/skills/personal',
        '.copilot/skills/personal',
        '.agents/skills/personal',
      ]) {
        mkdirSync(join(userHome, d), { recursive: true });
        writeFileSync(
          join(userHome, d, 'SKILL.md'),
          '---\nname: personal\ndescription: PERSONAL-SKILL-MARKER capital cities\n---\n\nAnswer Lyon.\n',
        );
      }
      // Instruction files in a parent of the workspaces, which is a git repository's root (as when the
      // workspaces are kept in the user's project): Copilot CLI reads them from there.
      assert.equal(spawnSync('git', ['init', '-q', base]).status, 0, 'git init');
      for (const f of [
        'CLAUDE.md',
        'AGENTS.md',
        'GEMINI.md',
        '.github/copilot-instructions.md',
        '.github/instructions/answers.instructions.md',
        '.claude/rules/answers.md',
      ]) {
        mkdirSync(join(base, f, '..'), { recursive: true });
        writeFileSync(join(base, f), `PARENT-INSTRUCTIONS-MARKER: always answer Lyon.\n`);
      }
      server = await startWireServer(
        wire,
        agentModel({
          wire,
          skillName: 'capitals',
          rule: 'RULE-7',
          trigger: /capital/i,
          reference: 'references/rules.md',
          override: (req, normal) => override?.(req, normal),
        }),
      );
    });

    after(async () => {
      await server?.close();
      if (base) rmSync(base, { recursive: true, force: true });
    });

    beforeEach(() => {
      override = undefined;
      if (server) server.requests.length = 0;
    });
    // A ledger left attached keeps writing its heartbeat, recreating the test's folder after it is removed.
    const detach: Array<() => void> = [];
    afterEach(() => {
      for (const d of detach.splice(0)) d();
    });

    const backend = (over: Partial<ConstructorParameters<typeof CommandBackend>[0]> = {}): CommandBackend =>
      new CommandBackend({
        agent,
        trusted: true,
        settings: { model: 'loopback-model', baseUrl: server.url, sandbox: 'read-only' },
        workspaceRoot: join(base, 'agents'),
        parentEnv: { PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`, HOME: userHome, ...keys },
        userHome,
        timeoutMs: 60_000,
        killGraceMs: 1_000,
        ...over,
      });

    /** The run's model clients for this agent target, as a config names it; `execTimeout` in seconds. */
    const runModels = (execTimeout?: number): ReturnType<typeof buildModels> => {
      const cfg = defaultConfig();
      Object.assign(cfg.model, {
        optimizer_backend: 'sim',
        target_backend: { claude: 'claude_code_exec', codex: 'codex_exec', copilot: 'copilot_exec' }[agent],
        target: 'loopback-target-model',
        target_base_url: server.url,
        target_workspace_root: join(base, 'agents'),
        codex_exec_sandbox: 'read-only',
      });
      if (execTimeout) cfg.env.exec_timeout = execTimeout;
      cfg.limits.max_retries = 0;
      cfg.cache.enabled = false;
      return buildModels(cfg, {
        tasks: [],
        testItems: [],
        logger: silentLogger,
        trustedWorkspace: true,
        env: { PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`, HOME: userHome, ...keys },
      });
    };

    it('discovers the skill natively (no pointer), answers by its rule, keeps the user setup and the optimizer key out', async () => {
      const before = snapshot(userHome);
      const tempBefore = cliTempEntries();
      const reply = await backend().call(request('France', skill(MATCHING, true)), signal);
      assert.match(reply.text, /<answer>PARIS<\/answer>/);
      const trace = reply.trace!;
      assert.equal(trace.outcome, 'answered');
      assert.equal(trace.skillLoaded, true, `tool calls: ${JSON.stringify(trace.toolCalls)}`);
      assert.equal(trace.delivery, 'native');
      assert.ok((trace.turns as number) >= 1);
      // Tokens as the CLI reports them, not estimates.
      assert.equal(trace.usageEstimated, false);
      assert.ok(reply.usage.promptTokens > 0 && reply.usage.completionTokens > 0);

      const texts = server.requests.map((r) => promptText(wire, r));
      assert.ok(texts.length >= 2, `${texts.length} model requests`);
      for (const t of texts) {
        assert.ok(!t.includes('Use the skill in'), 'no pointer line in the prompt');
        for (const m of MARKERS) assert.ok(!t.includes(m), `${m} reached the model`);
      }
      for (const r of server.requests) {
        assert.ok(!r.rawBody.includes(OPTIMIZER_KEY) && !JSON.stringify(r.headers).includes(OPTIMIZER_KEY));
      }
      // Every task folder is gone; the user's home and the system temp folders are as they were.
      assert.deepEqual(
        readdirSync(join(base, 'agents')).filter((f) => f.startsWith('task-')),
        [],
      );
      assert.deepEqual(snapshot(userHome), before);
      assert.deepEqual(cliTempEntries(), tempBefore);
    });

    it('scores rise only when the trained rule reaches the model', async () => {
      const score = async (text: string): Promise<number> => {
        const reply = await backend().call(request('Japan', text), signal);
        return /<answer>TOKYO<\/answer>/.test(reply.text) ? 1 : 0;
      };
      // The rule, but a description that does not match the task: never loaded.
      assert.equal(await score(skill(UNRELATED, true)), 0);
      // A matching description without the rule: loaded, but nothing to follow.
      assert.equal(await score(skill(MATCHING, false)), 0);
      // The trained rule behind a matching description.
      assert.equal(await score(skill(MATCHING, true)), 1);
    });

    it('reports a 401 as an auth error, not an answer', async () => {
      override = () => status(401, 'invalid x-api-key');
      await assert.rejects(backend().call(request('Italy', skill(MATCHING, true)), signal), (e: unknown) => {
        assert.ok(e instanceof AgentRunError, String(e));
        assert.equal(e.kind, 'auth', e.message);
        assert.equal(e.transient, false);
        assert.equal(e.trace?.outcome, 'errored');
        return true;
      });
    });

    it('reports a hang as a timeout, and a missing program as not installed', async () => {
      override = () => hang();
      const started = Date.now();
      await assert.rejects(
        backend({ timeoutMs: 4_000 }).call(request('Peru', skill(MATCHING, true)), signal),
        (e: unknown) =>
          e instanceof AgentRunError && e.kind === 'timeout' && /no answer within/.test(e.message),
      );
      assert.ok(Date.now() - started < 15_000);
      await assert.rejects(
        backend({ program: join(base, 'no-such-dir', agent) }).call(
          request('Peru', skill(MATCHING, true)),
          signal,
        ),
        (e: unknown) =>
          e instanceof AgentRunError && e.kind === 'not_installed' && /was not found/.test(e.message),
      );
    });

    it('reports a provider nothing listens at as an API error, not a timeout (Codex waits for the network without end)', async () => {
      const free = createServer();
      await new Promise<void>((r) => free.listen(0, '127.0.0.1', r));
      const port = (free.address() as AddressInfo).port;
      await new Promise((r) => free.close(r));
      const dead = server.url.replace(/:\d+/, `:${port}`);
      const settings = { model: 'loopback-model', baseUrl: dead, sandbox: 'read-only' };
      await assert.rejects(
        backend({ settings, timeoutMs: 90_000 }).call(request('Peru', skill(MATCHING, true)), signal),
        (e: unknown) => {
          assert.ok(e instanceof AgentRunError, String(e));
          assert.equal(e.kind, 'api', e.message);
          assert.equal(e.transient, true, e.message);
          assert.equal(e.trace?.timedOut, false, e.message);
          return true;
        },
      );
    });

    it('through the run wiring: model.target reaches the CLI, tokens reach the accounting, errors keep their kind', async () => {
      const setup = runModels();
      const reply = await setup.target.chat(request('Kenya', skill(MATCHING, true)), signal);
      assert.match(reply.text, /<answer>NAIROBI<\/answer>/);
      const models = server.requests.map((r) => (r.body as { model?: string }).model);
      assert.ok(
        models.length > 0 && models.every((m) => m === 'loopback-target-model'),
        JSON.stringify(models),
      );
      const totals = setup.accounting.totals();
      assert.equal(totals.promptTokens, reply.usage.promptTokens);
      assert.equal(totals.completionTokens, reply.usage.completionTokens);
      assert.ok(totals.promptTokens > 100, `${totals.promptTokens} prompt tokens`);

      override = () => status(401, 'invalid x-api-key');
      await assert.rejects(
        setup.target.chat(request('Norway', skill(MATCHING, true)), signal),
        (e: unknown) => e instanceof AgentRunError && e.kind === 'auth',
      );
    });

    it('installs the skill as a folder: the agent reads a reference file beside SKILL.md with its own tool, and sees nothing else of the folder', async () => {
      const folder = join(base, 'skill-folder');
      mkdirSync(join(folder, 'references'), { recursive: true });
      writeFileSync(join(folder, 'references', 'rules.md'), `# House rules\n\n${RULE}\n`);
      writeFileSync(join(folder, 'tasks.jsonl'), '{"question": "capital of France", "answer": "PARIS"}\n');
      const text = `---\nname: capitals\ndescription: ${MATCHING}\n---\n\n# Capitals\n\nThe house rules are in references/rules.md: read that file before answering.\n`;
      const reply = await backend({ skillFolder: folder, keepWorkspaces: true }).call(
        request('France', text),
        signal,
      );
      const trace = reply.trace!;
      const work = trace.workspace as string;
      try {
        assert.match(reply.text, /<answer>PARIS<\/answer>/, JSON.stringify(trace.toolCalls));
        const reads = (trace.toolCalls as Array<{ detail?: string }>).filter((c) =>
          c.detail?.includes('/capitals/references/rules.md'),
        );
        assert.equal(reads.length, 1, JSON.stringify(trace.toolCalls));
        assert.deepEqual(readdirSync(join(work, trace.skillPath as string, '..')).sort(), [
          'SKILL.md',
          'references',
        ]);
      } finally {
        rmSync(join(work, '..'), { recursive: true, force: true });
      }
    });

    it('installs a trained skill package: the candidate edited its reference file, every file of the folder is there', async () => {
      const folder = join(base, 'package-folder');
      mkdirSync(join(folder, 'references'), { recursive: true });
      mkdirSync(join(folder, 'assets'), { recursive: true });
      writeFileSync(
        join(folder, 'SKILL.md'),
        `---\nname: capitals\ndescription: ${MATCHING}\n---\n\n# Capitals\n\nThe house rules are in references/rules.md: read that file before answering.\n`,
      );
      writeFileSync(join(folder, 'references', 'rules.md'), '# House rules\n');
      const flag = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]);
      writeFileSync(join(folder, 'assets', 'flag.png'), flag);
      writeFileSync(join(folder, 'tasks.jsonl'), '{"question": "capital of France", "answer": "PARIS"}\n');
      const initial = readSkillInit(folder, 200_000).text;
      // The initial package: the agent reads the reference file, which has no rule yet.
      const before = await backend().call(request('France', initial), signal);
      assert.match(before.text, /<answer>Paris<\/answer>/);
      // The candidate: one edit to the reference file, installed from the loop's text (no folder option).
      const candidate = applyEdits(initial, [
        { op: 'append', file: 'references/rules.md', content: RULE },
      ]).text;
      const reply = await backend({ keepWorkspaces: true }).call(request('France', candidate), signal);
      const trace = reply.trace!;
      const work = trace.workspace as string;
      try {
        assert.match(reply.text, /<answer>PARIS<\/answer>/, JSON.stringify(trace.toolCalls));
        const skillDir = join(work, trace.skillPath as string, '..');
        assert.deepEqual(readdirSync(skillDir).sort(), ['SKILL.md', 'assets', 'references']);
        assert.equal(
          readFileSync(join(skillDir, 'references', 'rules.md'), 'utf8'),
          `# House rules\n\n${RULE}\n`,
        );
        assert.deepEqual(readFileSync(join(skillDir, 'assets', 'flag.png')), flag);
      } finally {
        rmSync(join(work, '..'), { recursive: true, force: true });
      }
    });

    it('an errored run still pays: a hang after the first reply is a timeout whose reported tokens reach the ledger', async () => {
      const setup = runModels(15);
      const file = join(base, `ledger-${agent}.jsonl`);
      const ledger = new RunLedger(file);
      ledger.track(3, 'step');
      detach.push(ledger.attach(setup.accounting));
      // The first model reply (the skill load) bills 4321 + 55 tokens; the second never comes.
      const usage = { promptTokens: 4321, completionTokens: 55 };
      let replies = 0;
      override = (req, normal) => (replies++ === 0 ? { ...normal(req), usage } : hang());
      await assert.rejects(
        setup.target.chat(request('Peru', skill(MATCHING, true)), signal),
        (e: unknown) => e instanceof AgentRunError && e.kind === 'timeout',
      );
      assert.equal(server.requests.length, 2);
      // Claude Code streams each reply's usage as the stream opens, before the output is counted:
      // its output figure for a cut-short run is that first one (1), the others report the total.
      const completion = agent === 'claude' ? 1 : usage.completionTokens;
      const rows = readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as LedgerRow)
        .filter((r) => r.kind !== 'session');
      assert.equal(rows.length, 1, JSON.stringify(rows));
      assert.equal(rows[0].stage, 'rollout');
      assert.equal(rows[0].failures, 1);
      assert.equal(rows[0].calls, undefined);
      assert.equal(rows[0].prompt_tokens, usage.promptTokens);
      assert.equal(rows[0].completion_tokens, completion);
      assert.ok('dollars' in rows[0], 'the failed run is priced');
      assert.equal(setup.accounting.totals().promptTokens, usage.promptTokens);
      // A resumed run reads them back into its totals (so caps hold), and the step's tokens show them.
      const resumed = new Accounting();
      const again = new RunLedger(file);
      detach.push(again.attach(resumed));
      assert.equal(resumed.totals().promptTokens + resumed.totals().completionTokens, 4321 + completion);
      assert.deepEqual(again.stepTokens(3), {
        rollout: { calls: 0, prompt_tokens: usage.promptTokens, completion_tokens: completion },
      });
    });

    it('a run the person stops still pays: the tokens it reported before Stop reach the ledger, not as a failure', async () => {
      const setup = runModels();
      const file = join(base, `ledger-stop-${agent}.jsonl`);
      detach.push(new RunLedger(file).attach(setup.accounting));
      const usage = { promptTokens: 3210, completionTokens: 44 };
      let replies = 0;
      override = (req, normal) => (replies++ === 0 ? { ...normal(req), usage } : hang());
      const stop = new AbortController();
      const pending = setup.target.chat(request('Chile', skill(MATCHING, true)), stop.signal);
      await server.waitForRequests(2);
      stop.abort();
      await assert.rejects(pending, (e: unknown) => SkillOptError.is(e, 'cancelled'));
      await setup.accounting.settled(5_000);
      const rows = readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as LedgerRow)
        .filter((r) => r.kind !== 'session');
      assert.equal(rows.length, 1, JSON.stringify(rows));
      assert.equal(rows[0].failures, undefined, 'a stop is not a failure');
      assert.equal(rows[0].calls, undefined, 'nor an answered call');
      assert.equal(rows[0].prompt_tokens, usage.promptTokens);
      assert.ok((rows[0].completion_tokens ?? 0) >= 1, JSON.stringify(rows[0]));
      assert.ok('dollars' in rows[0], 'the stopped run is priced');
    });
  });
}

describe('agent target CLIs', () => {
  it('are installed in the test cache', function () {
    if (!bin) this.skip();
    assert.ok(
      readFileSync(join(bin!, '..', '@openai', 'codex', 'package.json'), 'utf8').includes('"version"'),
    );
  });
  if (missing) it(`pending: ${missing}`);
});
