import { SkillOptError } from '../errors';
import type { SkillOptConfig } from './schema';
import type { ConfigOrigin, ConfigWarning } from './schema/problems';
import { closest } from './schema/problems';
import { AGENT_TARGET_BACKENDS } from '../../protocol/vocabulary';

/**
 * The reference's one-switch provider choice (`model.backend`, `--backend`; skillopt-reference.md
 * §7.1 step 7 and §10.2): it fills both roles' backends and, where the model names are still the
 * OpenAI defaults, that backend's default model. Roles and models the user set on the command line
 * stay as given, as in the reference's train.py.
 */

/** The reference's spellings (skillopt/model/common.py) and ours, each to one canonical name. */
const CANONICAL: Record<string, string> = {
  azure: 'azure_openai',
  azure_openai: 'azure_openai',
  openai_chat: 'openai_chat',
  codex: 'codex_exec',
  codex_exec: 'codex_exec',
  claude: 'claude_chat',
  claude_chat: 'claude_chat',
  claude_code_exec: 'claude_code_exec',
  cursor: 'cursor_exec',
  cursor_agent: 'cursor_exec',
  cursor_exec: 'cursor_exec',
  copilot: 'copilot_chat',
  copilot_cli: 'copilot_chat',
  github_copilot: 'copilot_chat',
  copilot_chat: 'copilot_chat',
  copilot_exec: 'copilot_exec',
  qwen: 'qwen_chat',
  qwen_chat: 'qwen_chat',
  minimax: 'minimax_chat',
  minimax_chat: 'minimax_chat',
  openai_compatible: 'openai_compatible',
  openai_compatible_chat: 'openai_compatible',
  compat: 'openai_compatible',
  // Ours. `anthropic` is the reference's alias of claude_chat too; `openai` is not the reference's
  // (there it means codex), see the notice in applyBackendChoice.
  anthropic: 'anthropic',
  openai: 'openai',
  sim: 'sim',
  vscode_lm: 'vscode-lm',
};

/** Default model per backend when none is named (skillopt/model/common.py, _BACKEND_DEFAULT_MODELS). */
export const BACKEND_DEFAULT_MODELS: Readonly<Record<string, string>> = {
  azure_openai: 'gpt-4o',
  openai_chat: 'gpt-4o',
  openai: 'gpt-4o',
  codex_exec: 'gpt-4o',
  claude_chat: 'claude-sonnet-4-6',
  anthropic: 'claude-sonnet-4-6',
  claude_code_exec: 'claude-sonnet-4-6',
  cursor_exec: 'composer-2.5',
  qwen_chat: 'Qwen/Qwen3.5-4B',
  minimax_chat: 'MiniMax-M3',
  openai_compatible: 'gpt-4o-mini',
};

/** Role values the switch may replace, and the model names it treats as "not chosen" (train.py). */
const ROLE_DEFAULTS = new Set(['', 'openai_chat']);
const MODEL_SENTINELS = new Set(['gpt-5.4', 'gpt-5.5']);

/** Every spelling the high-level switch takes (a test keeps them in step with the role backends). */
export const BACKEND_SPELLINGS: readonly string[] = Object.keys(CANONICAL);

/** Canonical name of a backend spelling, or undefined when it is not one. */
export function canonicalBackend(name: string): string | undefined {
  return CANONICAL[name.trim().toLowerCase().replace(/-/g, '_')];
}

/** Both roles' backends for a high-level choice (§10.2). */
function rolesFor(backend: string): { optimizer: string; target: string } {
  switch (backend) {
    case 'claude_chat':
    case 'copilot_chat':
    case 'openai_compatible':
    case 'codex_exec':
    case 'anthropic':
    case 'openai':
    case 'sim':
    case 'vscode-lm':
      return { optimizer: backend, target: backend };
    case 'claude_code_exec':
    case 'cursor_exec':
    case 'copilot_exec':
    case 'qwen_chat':
    case 'minimax_chat':
      return { optimizer: 'openai_chat', target: backend };
    default:
      return { optimizer: 'openai_chat', target: 'openai_chat' };
  }
}

/** The model a role gets when its name is still an OpenAI default (train.py's per-backend swaps). */
function swappedModel(
  cfg: SkillOptConfig,
  role: 'optimizer' | 'target',
  backend: string,
): string | undefined {
  if (backend === 'minimax_chat')
    return role === 'target' ? cfg.model.minimax_model || 'MiniMax-M3' : undefined;
  // Copilot CLI model ids are not Azure deployment names: blank lets the CLI choose.
  if (backend === 'copilot_exec') return role === 'target' ? '' : undefined;
  const swaps = role === 'optimizer' ? ['claude_chat', 'anthropic', 'qwen_chat'] : SWAPPED_TARGETS;
  return swaps.includes(backend) ? BACKEND_DEFAULT_MODELS[backend] : undefined;
}
/** `model.<role>_openai_compatible_model`, else `model.openai_compatible_model`: the reference's name for the model. */
function compatibleModel(
  cfg: SkillOptConfig,
  role: 'optimizer' | 'target',
): { name: string; key: string } | undefined {
  const m = cfg.model as unknown as Record<string, unknown>;
  for (const key of [`${role}_openai_compatible_model`, 'openai_compatible_model']) {
    const value = m[key];
    const name = typeof value === 'string' || typeof value === 'number' ? String(value).trim() : '';
    if (name) return { name, key: `model.${key}` };
  }
  return undefined;
}
const AGENT_BACKENDS = new Set<string>([...AGENT_TARGET_BACKENDS, 'cursor_exec']);
const SWAPPED_TARGETS = ['claude_chat', 'anthropic', 'claude_code_exec', 'cursor_exec', 'qwen_chat'];

/**
 * Apply `model.backend` to the roles and models, in place, and return the one-line notice of what
 * it mapped to (none when nothing changed, unless the backend was given on the command line).
 * `fromCommandLine(path)` says whether a key was given with --cfg-options or a legacy flag.
 */
export function applyBackendChoice(
  cfg: SkillOptConfig,
  locate: (path: readonly string[]) => ConfigOrigin | undefined,
): ConfigWarning | undefined {
  const m = cfg.model;
  const origin = locate(['model', 'backend']);
  const fromCommandLine = (key: string): boolean => locate(['model', key])?.file.startsWith('--') === true;
  const backend = canonicalBackend(m.backend || 'azure_openai');
  const where = { file: origin?.file, line: origin?.line, key: 'model.backend' };
  if (!backend) {
    const near = closest(m.backend.trim().toLowerCase().replace(/-/g, '_'), Object.keys(CANONICAL));
    throw new SkillOptError('config', `unknown model.backend '${m.backend}'`, {
      ...where,
      fix: `${near ? `did you mean ${near}? ` : ''}use one of: ${Object.keys(CANONICAL).join(', ')}`,
    });
  }
  const changes: string[] = [];
  const roles = rolesFor(backend);
  for (const role of ['optimizer', 'target'] as const) {
    const key = `${role}_backend` as const;
    if (fromCommandLine(key) || !ROLE_DEFAULTS.has(m[key].trim())) continue;
    if (m[key] !== roles[role]) changes.push(`${key} ${roles[role]}`);
    m[key] = roles[role];
  }
  if (canonicalBackend(m.optimizer_backend) === 'codex_exec') {
    throw new SkillOptError('config', 'the Codex CLI cannot be the optimizer here (it can be the target)', {
      ...(backend === 'codex_exec' ? where : { key: 'model.optimizer_backend' }),
      fix: 'set model.optimizer_backend to openai, openai_chat (Azure) or anthropic, and keep codex_exec as model.target_backend',
    });
  }
  for (const role of ['optimizer', 'target'] as const) {
    const roleBackend = canonicalBackend(m[`${role}_backend`]) ?? '';
    const current = m[role].trim();
    if (fromCommandLine(role)) continue;
    let model: string | undefined;
    const compat = roleBackend === 'openai_compatible' ? compatibleModel(cfg, role) : undefined;
    if (compat) {
      if (current !== '' && !MODEL_SENTINELS.has(current) && current !== compat.name) {
        const at = locate(['model', compat.key.slice('model.'.length)]);
        throw new SkillOptError(
          'config',
          `model.${role} is '${current}' but ${compat.key} is '${compat.name}'`,
          {
            file: at?.file,
            line: at?.line,
            key: compat.key,
            fix: `keep one of them: model.${role} names the model of the ${role}`,
          },
        );
      }
      model = compat.name;
    } else if (MODEL_SENTINELS.has(current)) model = swappedModel(cfg, role, roleBackend);
    // An empty name takes the backend's default, as the reference's clients do; for an agent CLI it
    // means the CLI's own default model, the one the user's agent runs with.
    else if (current === '' && !AGENT_BACKENDS.has(roleBackend)) model = BACKEND_DEFAULT_MODELS[roleBackend];
    if (model === undefined || model === m[role]) continue;
    changes.push(`model.${role} ${model || '(the CLI default)'}${compat ? ` (${compat.key})` : ''}`);
    m[role] = model;
  }
  // A command-line choice that changed nothing still gets its line: the user asked for something.
  if (changes.length === 0 && !origin?.file.startsWith('--')) return undefined;
  const openaiNote =
    backend === 'openai'
      ? " (the OpenAI API; the reference SkillOpt reads 'openai' as codex: use codex_exec for the Codex CLI target)"
      : '';
  const what = changes.length > 0 ? changes.join(', ') : 'no change (both roles and models were set)';
  return {
    ...where,
    message: `model.backend '${m.backend}'${openaiNote} → ${what}; set model.optimizer_backend/target_backend or model.optimizer/target to choose otherwise`,
  };
}
