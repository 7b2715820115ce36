import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CommandBackend, type AgentName } from '../../../src/engine/llm/command';
import type { LedgerRow } from '../../../src/engine/llm/ledger';
import type { ChatRequest } from '../../../src/engine/llm/types';
import { prepareRun, type PreparedRun } from '../../../src/engine/run';
import { RUN_FILE } from '../../../src/engine/store/layout';
import { agentCliBin } from '../../support/agentClis';
import { agentModel, type AgentModelOptions, type AgentWire } from '../../support/loopback/agentModel';
import { startAnthropicServer } from '../../support/loopback/anthropicServer';
import type { Handler, LoopbackServer } from '../../support/loopback/core';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import { startResponsesServer } from '../../support/loopback/responsesServer';
import { scriptedModels, scriptedOptimizerModel } from '../../support/loopback/scriptedModels';

/**
 * A small training project whose target is a real agent CLI and whose optimizer is
 * a loopback OpenAI server: six capital-city questions, two per split, one step per epoch.
 */
const COUNTRIES: Record<string, string> = {
  France: 'PARIS',
  Japan: 'TOKYO',
  Italy: 'ROME',
  Peru: 'LIMA',
  Kenya: 'NAIROBI',
  Norway: 'OSLO',
};

const OPTIMIZER_KEY = 'sk-fake-optimizer-key';

/** Each agent CLI as a run's target: its config name, the wire it speaks, and the key it reads. */
export interface AgentTarget {
  agent: AgentName;
  backend: string;
  wire: AgentWire;
  keyVar: string;
  start: (handler: Handler) => Promise<LoopbackServer>;
}

export const AGENT_TARGETS: readonly AgentTarget[] = [
  {
    agent: 'claude',
    backend: 'claude_code_exec',
    wire: 'anthropic',
    keyVar: 'ANTHROPIC_API_KEY',
    start: startAnthropicServer,
  },
  {
    agent: 'codex',
    backend: 'codex_exec',
    wire: 'responses',
    keyVar: 'OPENAI_API_KEY',
    start: startResponsesServer,
  },
  {
    agent: 'copilot',
    backend: 'copilot_exec',
    wire: 'chat',
    keyVar: 'COPILOT_PROVIDER_API_KEY',
    start: startOpenAiServer,
  },
];

/** The capitals question for `country` as a target request, with this skill text. */
export function capitalRequest(country: string, skill: string): ChatRequest {
  const prompt = `What is the capital of ${country}?\n\nEnd with your final answer wrapped as <answer>...</answer>.`;
  return {
    role: 'target',
    stage: 'rollout',
    messages: [{ role: 'user', content: prompt }],
    task: { taskId: `capital-${country}`, skill, skillName: 'capitals', prompt },
  };
}

/**
 * `t`'s CLI (from `bin`) as a target backend against the server at `url`, its workspaces and the
 * user's home under `base`, with its own key.
 */
export function agentBackend(
  t: AgentTarget,
  bin: string,
  base: string,
  url: string,
  over: Partial<ConstructorParameters<typeof CommandBackend>[0]> = {},
): CommandBackend {
  return new CommandBackend({
    agent: t.agent,
    trusted: true,
    settings: { model: 'loopback-model', baseUrl: url, sandbox: 'read-only' },
    workspaceRoot: join(base, 'agents'),
    parentEnv: {
      PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
      HOME: join(base, 'home'),
      [t.keyVar]: `fake-${t.agent}-target-key`,
    },
    userHome: join(base, 'home'),
    killGraceMs: 1_000,
    ...over,
  });
}

/** The agent model of the capitals project for this CLI, with `override` replacing its replies. */
function startAgentServer(t: AgentTarget, override?: AgentModelOptions['override']): Promise<LoopbackServer> {
  return t.start(
    agentModel({
      wire: t.wire,
      skillName: 'capitals',
      rule: 'RULE-7',
      trigger: /capital/i,
      ...(override ? { override } : {}),
    }),
  );
}

/** Writes SKILL.md, tasks.jsonl and skillopt.yaml into `dir`; returns the config's path. */
function writeCapitalsProject(dir: string, t: AgentTarget): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'SKILL.md'),
    '---\nname: capitals\ndescription: Use when answering questions about capital cities.\n---\n\n# Capitals\n\nAnswer briefly.\n',
  );
  writeFileSync(
    join(dir, 'tasks.jsonl'),
    Object.entries(COUNTRIES)
      .map(([country, city]) =>
        JSON.stringify({
          id: `capital-${country}`,
          question: `What is the capital of ${country}?`,
          answer: city,
        }),
      )
      .join('\n') + '\n',
  );
  const config = join(dir, 'skillopt.yaml');
  writeFileSync(
    config,
    [
      'model:',
      '  optimizer_backend: openai',
      `  optimizer: ${scriptedOptimizerModel}`,
      `  target_backend: ${t.backend}`,
      '  target: loopback-target-model',
      // Codex's default sandbox needs kernel features a test machine may lack; reading is enough.
      ...(t.agent === 'codex' ? ['  codex_exec_sandbox: read-only'] : []),
      'train:',
      '  num_epochs: 1',
      '  batch_size: 2',
      '  seed: 7',
      'gradient:',
      '  minibatch_size: 2',
      'env:',
      '  name: capitals',
      '  skill_init: SKILL.md',
      '  split_mode: ratio',
      '  data_path: tasks.jsonl',
      '  split_ratio: "2:2:2"',
      '  scorer: exact',
      '  exec_timeout: 60',
      'limits:',
      '  max_retries: 0',
      'cache:',
      '  enabled: false',
      '',
    ].join('\n'),
  );
  return config;
}

/**
 * One agent's capitals project with its optimizer and target servers, made by the enclosing
 * describe's `before` hook (which skips the suite when the CLIs are not installed) and removed after.
 */
export class AgentRunFixture {
  base = '';
  config = '';
  optimizer!: LoopbackServer;
  target!: LoopbackServer;
  private bin = '';

  private constructor(readonly t: AgentTarget) {}

  static use(t: AgentTarget, prefix: string, override: AgentModelOptions['override']): AgentRunFixture {
    const f = new AgentRunFixture(t);
    before(async function () {
      const { bin } = agentCliBin();
      if (!bin) {
        this.skip();
        return;
      }
      f.bin = bin;
      f.base = mkdtempSync(join(tmpdir(), prefix));
      f.config = writeCapitalsProject(join(f.base, 'project'), t);
      f.optimizer = await startOpenAiServer(scriptedModels([]));
      f.target = await startAgentServer(t, override);
    });
    after(async () => {
      await Promise.all([f.optimizer?.close(), f.target?.close()]);
      if (f.base) rmSync(f.base, { recursive: true, force: true });
    });
    return f;
  }

  /** Overrides pointing both roles at their servers and the workspaces into the test's folder. */
  overrides(more: readonly string[] = []): string[] {
    return [
      `model.target_base_url=${this.target.url}`,
      `model.optimizer_base_url=${this.optimizer.url}`,
      `model.target_workspace_root=${join(this.base, 'agents')}`,
      ...more,
    ];
  }

  /** The environment SkillOpt runs in: the CLIs on PATH, a home of the test's own, the target's key. */
  env(): NodeJS.ProcessEnv {
    return {
      PATH: [this.bin, process.env.PATH].filter(Boolean).join(delimiter),
      HOME: join(this.base, 'home'),
      [this.t.keyVar]: `fake-${this.t.agent}-target-key`,
    };
  }

  /** The engine's run in `out` (under the test's folder). */
  prepare(out: string, more: readonly string[] = []): PreparedRun {
    return prepareRun({
      configPath: this.config,
      outDir: join(this.base, out),
      overrides: this.overrides(more),
      models: { keys: { openai: OPTIMIZER_KEY }, env: this.env(), trustedWorkspace: true },
    });
  }

  /** `skillopt train` of the project into `out`, with these flags and overrides. */
  train(out: string, flags: readonly string[], more: readonly string[] = []): ReturnType<typeof skilloptCli> {
    return skilloptCli(
      [
        'train',
        this.config,
        '--out',
        join(this.base, out),
        ...flags,
        '--cfg-options',
        ...this.overrides(more),
      ],
      // The optimizer's key by its variable; a target that reads the same one (Codex) gets its own.
      { OPENAI_API_KEY: OPTIMIZER_KEY, ...this.env() },
    );
  }

  /** Requests the optimizer server received (the analysts, merges, ... all go there). */
  optimizerRequests(): number {
    return this.optimizer.requests.filter(
      (r) => (r.body as { model?: string }).model === scriptedOptimizerModel,
    ).length;
  }
}

/** The run's ledger rows, in the order written. */
export function ledgerRows(outDir: string): LedgerRow[] {
  return readFileSync(join(outDir, RUN_FILE.ledger), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LedgerRow);
}

/** `skillopt <args>` from source, run beside the loopback servers (so not spawnSync). */
function skilloptCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const root = join(__dirname, '..', '..', '..');
  const version = pathToFileURL(join(root, 'test', 'support', 'version.ts')).href;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', version, join(root, 'src', 'cli', 'main.ts'), ...args],
    { cwd: root, env: { ...env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
