/**
 * How each agent CLI is run so that it loads a skill the way it does in real use: where it
 * discovers project skills, which flags give machine-readable output without saving a session,
 * which variables reach its provider, and what its isolated home is seeded with.
 */
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskDirs } from './isolation';
import { ancestors, markProjectRoot } from './isolation';
import type { AgentFormat } from './transcript';
import type { AgentTargetBackend } from '../../../protocol/vocabulary';
import { OPENAI_DEFAULT_BASE_URL } from '../openai';
import { pathFromEnv } from './envFallbacks';

export type AgentName = 'claude' | 'codex' | 'copilot';

export const AGENT_NAMES: readonly AgentName[] = ['claude', 'codex', 'copilot'];

/** What the config says about the agent target (model.target, model.target_base_url, *_exec_* keys). */
export interface AgentSettings {
  /** Passed to the CLI's model flag; absent = the CLI's default model. */
  model?: string;
  /** The provider endpoint the CLI talks to (a gateway, a local server). */
  baseUrl?: string;
  /** Claude `--effort`, Codex `model_reasoning_effort`. */
  effort?: string;
  /** Claude Code: MAX_THINKING_TOKENS. */
  maxThinkingTokens?: number;
  /** Codex: `--sandbox` (default workspace-write) and approval policy (default never). */
  sandbox?: string;
  approvalPolicy?: string;
  /** Codex `--profile`. */
  profile?: string;
  networkAccess?: boolean | null;
  webSearch?: boolean | null;
  /** Copilot: `--allow-all-tools` (default: only the skill, view, glob and grep tools are allowed). */
  allowAllTools?: boolean | null;
  /** Copilot BYOK provider type for `baseUrl`: openai (default), anthropic or azure. */
  providerType?: string;
}

export interface PresetContext {
  dirs: TaskDirs;
  /** The prompt the agent receives. */
  prompt: string;
  program: string;
  settings: AgentSettings;
  /** The user's real home and environment, read only to find credential files to copy. */
  userHome: string;
  parentEnv: NodeJS.ProcessEnv;
  /** Shared, product-owned cache folder for what a CLI unpacks on first start (Copilot's package). */
  sharedCache: string;
}

/** What a preset's per-task variables depend on. */
export type EnvContext = Pick<PresetContext, 'dirs' | 'settings' | 'parentEnv' | 'sharedCache'>;

export interface PresetRun {
  argv: string[];
  /** Variables set on top of the allow-listed environment and the isolated home. */
  env: Record<string, string>;
  /** Credential files copied into the isolated home, for the trace (paths, never contents). */
  seeded: string[];
}

export interface AgentPreset {
  name: AgentName;
  label: string;
  /** `model.target_backend` that selects it (the reference's name). */
  backend: AgentTargetBackend;
  /** The program name on PATH. */
  program: string;
  /** The config key and the environment variable that give the program's path instead. */
  pathKey: string;
  pathEnv: string;
  npmPackage: string;
  /** Where the CLI discovers project skills, relative to the workspace. */
  skillRoot: string;
  format: AgentFormat;
  /** Parent variables this CLI may see: its own credentials and provider settings. */
  passEnv: readonly string[];
  /** How a user gets credentials to it (for auth errors). */
  authHint: string;
  /**
   * The provider whose prices apply to the CLI's tokens: the API it talks to, as our own backends
   * name it (an OpenAI-wire server other than OpenAI's is `openai_compatible`, priced only by `prices:`).
   */
  billedProvider(settings: AgentSettings, env: NodeJS.ProcessEnv): string;
  /**
   * Prompt tokens every model request of the CLI carries before the task: its system prompt and
   * tool list, as the request bodies the pinned CLI sends measure (characters ÷ 4, the loopback
   * tests' requests of test/unit/agents/realCliDollarCap.test.ts): Claude Code ~74 kB, Codex ~40 kB,
   * Copilot CLI ~48 kB. For the dollar estimate only.
   */
  requestOverheadTokens: number;
  /** Folders the CLI makes outside its task folder whatever TMPDIR says (removed afterwards). */
  fixedDirs?: () => string[];
  /** Output lines that say the CLI keeps failing the same way and will not stop by itself: it is ended then. */
  stopOn?: { line: RegExp; times: number };
  /** The variables it sets for each task, over the allow-listed environment (its home, settings). */
  taskEnv(ctx: EnvContext): Record<string, string>;
  build(ctx: PresetContext): PresetRun;
}

/** The reference's models used as "not set" sentinels (§7.1 step 7): never passed to a non-OpenAI CLI. */
const OPENAI_SENTINELS = new Set(['gpt-5.5', 'gpt-5.4']);

function copyIfPresent(from: string, to: string, seeded: string[]): void {
  if (!existsSync(from)) return;
  mkdirSync(join(to, '..'), { recursive: true });
  copyFileSync(from, to);
  seeded.push(from);
}

const tomlString = (s: string): string => JSON.stringify(s);

/** An OpenAI-wire endpoint as our OpenAI backend names it. */
const openAiAt = (baseUrl: string | undefined): string =>
  !baseUrl || baseUrl.replace(/\/+$/, '') === OPENAI_DEFAULT_BASE_URL ? 'openai' : 'openai_compatible';

const claude: AgentPreset = {
  name: 'claude',
  label: 'Claude Code',
  backend: 'claude_code_exec',
  program: 'claude',
  pathKey: 'claude_code_exec_path',
  pathEnv: 'CLAUDE_CODE_EXEC_PATH',
  npmPackage: '@anthropic-ai/claude-code',
  skillRoot: '.claude/skills',
  format: 'claude',
  passEnv: [
    'ANTHROPIC_API_KEY',
    'ANTHROPIC_AUTH_TOKEN',
    'ANTHROPIC_BASE_URL',
    'ANTHROPIC_CUSTOM_HEADERS',
    'CLAUDE_CODE_OAUTH_TOKEN',
    'CLAUDE_CODE_USE_BEDROCK',
    'CLAUDE_CODE_USE_VERTEX',
    'CLAUDE_CODE_MAX_RETRIES',
    'AWS_REGION',
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_BEARER_TOKEN_BEDROCK',
    'ANTHROPIC_VERTEX_PROJECT_ID',
    'CLOUD_ML_REGION',
    'GOOGLE_APPLICATION_CREDENTIALS',
  ],
  authHint:
    'set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN / CLAUDE_CODE_OAUTH_TOKEN) where SkillOpt runs, or log in with `claude` once: its ~/.claude/.credentials.json is copied into each isolated home',
  // Bedrock and Vertex list Claude at Anthropic's prices.
  requestOverheadTokens: 18_500,
  billedProvider: () => 'anthropic',
  taskEnv: ({ dirs, settings: s, parentEnv }) => ({
    CLAUDE_CONFIG_DIR: join(dirs.home, '.claude'),
    ...(s.baseUrl ? { ANTHROPIC_BASE_URL: s.baseUrl } : {}),
    ...(s.maxThinkingTokens ? { MAX_THINKING_TOKENS: String(s.maxThinkingTokens) } : {}),
    // Our client retries whole runs on transient errors; the CLI retries each request twice.
    CLAUDE_CODE_MAX_RETRIES: parentEnv.CLAUDE_CODE_MAX_RETRIES || '2',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_DISABLE_AUTO_MEMORY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
  }),
  build(ctx) {
    const seeded: string[] = [];
    const config = join(ctx.dirs.home, '.claude');
    mkdirSync(config, { recursive: true });
    const userConfig = ctx.parentEnv.CLAUDE_CONFIG_DIR || join(ctx.userHome, '.claude');
    copyIfPresent(join(userConfig, '.credentials.json'), join(config, '.credentials.json'), seeded);
    // CLAUDE.md files above the workspace are the user's, not the skill's: keep them out.
    const claudeMdExcludes = ancestors(ctx.dirs.work).flatMap((a) =>
      ['CLAUDE.md', 'CLAUDE.local.md', '.claude/CLAUDE.md', '.claude/rules/**', 'AGENTS.md'].map((f) =>
        join(a, f).replace(/\\/g, '/'),
      ),
    );
    writeFileSync(join(config, 'settings.json'), `${JSON.stringify({ claudeMdExcludes }, null, 2)}\n`);
    markProjectRoot(ctx.dirs.work);
    const s = ctx.settings;
    const argv = [
      ctx.program,
      '-p',
      ctx.prompt,
      '--output-format',
      'stream-json',
      '--verbose',
      '--no-session-persistence',
    ];
    if (s.model && !OPENAI_SENTINELS.has(s.model)) argv.push('--model', s.model);
    if (s.effort) argv.push('--effort', s.effort);
    return { argv, env: this.taskEnv(ctx), seeded };
  },
};

const codex: AgentPreset = {
  name: 'codex',
  label: 'Codex',
  backend: 'codex_exec',
  program: 'codex',
  pathKey: 'codex_exec_path',
  pathEnv: 'CODEX_EXEC_PATH',
  npmPackage: '@openai/codex',
  skillRoot: '.agents/skills',
  format: 'codex',
  passEnv: ['OPENAI_API_KEY', 'CODEX_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_ORG_ID', 'OPENAI_PROJECT_ID'],
  authHint:
    'set OPENAI_API_KEY (or CODEX_API_KEY) where SkillOpt runs, or log in with `codex login` once: its ~/.codex/auth.json is copied into each isolated home',
  requestOverheadTokens: 10_000,
  billedProvider: (s, env) => openAiAt(s.baseUrl || env.OPENAI_BASE_URL),
  // Its sandbox makes the app-server socket folder it hides from commands at /tmp/codex-daemon-<uid>.
  fixedDirs: () => (typeof process.getuid === 'function' ? [`/tmp/codex-daemon-${process.getuid()}`] : []),
  // Against a provider it cannot connect to it waits for the network without end (doubling waits:
  // the third notice comes ~17 s in); its configured request_max_retries is 2.
  stopOn: { line: /^\{"type":"error","message":"Reconnecting\.\.\. waiting for network/, times: 3 },
  taskEnv: ({ dirs }) => ({ CODEX_HOME: join(dirs.home, '.codex') }),
  build(ctx) {
    const seeded: string[] = [];
    const home = join(ctx.dirs.home, '.codex');
    mkdirSync(home, { recursive: true });
    const userHome = ctx.parentEnv.CODEX_HOME || join(ctx.userHome, '.codex');
    copyIfPresent(join(userHome, 'auth.json'), join(home, 'auth.json'), seeded);
    const s = ctx.settings;
    const toml = [
      '# Written by SkillOpt for one task; removed with the task.',
      // No project root above the workspace: AGENTS.md is read from the workspace only.
      'project_root_markers = []',
      'check_for_update_on_startup = false',
      ...(s.model ? [`model = ${tomlString(s.model)}`] : []),
      ...(s.effort ? [`model_reasoning_effort = ${tomlString(s.effort)}`] : []),
      `approval_policy = ${tomlString(s.approvalPolicy || 'never')}`,
      ...(s.webSearch != null ? [`web_search = ${tomlString(s.webSearch ? 'live' : 'disabled')}`] : []),
      ...(s.baseUrl ? ['model_provider = "skillopt"'] : []),
      '',
      '[history]',
      'persistence = "none"',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[otel]',
      'exporter = "none"',
    ];
    if (s.networkAccess != null) {
      toml.push('', '[sandbox_workspace_write]', `network_access = ${s.networkAccess ? 'true' : 'false'}`);
    }
    if (s.baseUrl) {
      toml.push(
        '',
        '[model_providers.skillopt]',
        'name = "skillopt target"',
        `base_url = ${tomlString(s.baseUrl)}`,
        'env_key = "OPENAI_API_KEY"',
        'wire_api = "responses"',
        'request_max_retries = 2',
        'stream_max_retries = 2',
      );
    }
    writeFileSync(join(home, 'config.toml'), `${toml.join('\n')}\n`);
    const argv = [
      ctx.program,
      'exec',
      '--json',
      '--skip-git-repo-check',
      // No --ephemeral: the session file (in the task's home, removed with it) is where Codex
      // writes its token counts after every reply, which a run cut short needs (outcome.ts).
      '--color',
      'never',
      '--sandbox',
      s.sandbox || 'workspace-write',
    ];
    if (s.profile) argv.push('--profile', s.profile);
    argv.push('--', ctx.prompt);
    return { argv, env: this.taskEnv(ctx), seeded };
  },
};

const copilot: AgentPreset = {
  name: 'copilot',
  label: 'Copilot CLI',
  backend: 'copilot_exec',
  program: 'copilot',
  pathKey: 'copilot_exec_path',
  pathEnv: 'COPILOT_EXEC_PATH',
  npmPackage: '@github/copilot',
  skillRoot: '.github/skills',
  format: 'copilot',
  passEnv: [
    'COPILOT_GITHUB_TOKEN',
    'GH_TOKEN',
    'GITHUB_TOKEN',
    'GH_HOST',
    'COPILOT_GH_HOST',
    'COPILOT_PROVIDER_BASE_URL',
    'COPILOT_PROVIDER_TYPE',
    'COPILOT_PROVIDER_API_KEY',
    'COPILOT_PROVIDER_API_KEY_COMMAND',
    'COPILOT_PROVIDER_BEARER_TOKEN',
    'COPILOT_PROVIDER_WIRE_API',
    'COPILOT_PROVIDER_TRANSPORT',
    'COPILOT_PROVIDER_HEADERS',
    'COPILOT_PROVIDER_AZURE_API_VERSION',
    'COPILOT_PROVIDER_MODEL_ID',
    'COPILOT_PROVIDER_WIRE_MODEL',
    'COPILOT_PROVIDER_MAX_PROMPT_TOKENS',
    'COPILOT_PROVIDER_MAX_OUTPUT_TOKENS',
  ],
  authHint:
    'set COPILOT_GITHUB_TOKEN (a token with Copilot access) where SkillOpt runs, or point it at your own provider with model.target_base_url and COPILOT_PROVIDER_API_KEY',
  requestOverheadTokens: 12_000,
  billedProvider(s, env) {
    const baseUrl = s.baseUrl || env.COPILOT_PROVIDER_BASE_URL;
    // Through GitHub, a Copilot plan pays (per premium request, not per token): no list price.
    if (!baseUrl) return 'github_copilot';
    const type = (s.providerType || env.COPILOT_PROVIDER_TYPE || 'openai').toLowerCase();
    return type === 'anthropic' ? 'anthropic' : type === 'azure' ? 'azure_openai' : openAiAt(baseUrl);
  },
  taskEnv: ({ dirs, settings: s, sharedCache }) => ({
    COPILOT_HOME: join(dirs.home, '.copilot'),
    // The CLI unpacks its ~200 MB package on first start; one shared copy, not one per task.
    COPILOT_CACHE_HOME: join(sharedCache, 'copilot'),
    COPILOT_AUTO_UPDATE: 'false',
    // Copilot CLI prints no token counts; its OpenTelemetry file exporter does (one file per task).
    COPILOT_OTEL_FILE_EXPORTER_PATH: join(dirs.tmp, 'copilot-otel.jsonl'),
    ...(s.baseUrl
      ? {
          COPILOT_PROVIDER_BASE_URL: s.baseUrl,
          COPILOT_OFFLINE: 'true',
          ...(s.providerType ? { COPILOT_PROVIDER_TYPE: s.providerType } : {}),
          ...(s.model && !OPENAI_SENTINELS.has(s.model) ? { COPILOT_MODEL: s.model } : {}),
        }
      : {}),
  }),
  build(ctx) {
    const s = ctx.settings;
    mkdirSync(join(ctx.dirs.home, '.copilot'), { recursive: true });
    markProjectRoot(ctx.dirs.work);
    const argv = [ctx.program, '-p', ctx.prompt, '--output-format', 'json', '--no-auto-update', '--no-color'];
    if (s.allowAllTools) argv.push('--allow-all-tools');
    // Enough to load and read a skill and look around the workspace; nothing that writes or runs.
    else argv.push('--allow-tool', 'skill', 'view', 'glob', 'grep');
    argv.push('--disable-builtin-mcps');
    if (s.model && !OPENAI_SENTINELS.has(s.model)) argv.push('--model', s.model);
    if (s.effort) argv.push('--reasoning-effort', s.effort);
    return { argv, env: this.taskEnv(ctx), seeded: [] };
  },
};

export const PRESETS: Record<AgentName, AgentPreset> = { claude, codex, copilot };

export function isAgentName(name: string): name is AgentName {
  return (AGENT_NAMES as readonly string[]).includes(name);
}

/** The program a preset runs: the configured path, else its variables', else its name on PATH. */
export function presetProgram(preset: AgentPreset, configured: string, env: NodeJS.ProcessEnv): string {
  return configured || pathFromEnv(preset.name, env) || preset.program;
}
