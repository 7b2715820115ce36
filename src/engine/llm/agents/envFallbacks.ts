/**
 * The reference's environment fallbacks for the agent CLIs (its backend_config.py): a variable
 * stands in for its *_exec_* key when the config leaves the key blank (the key wins otherwise), and
 * its value is checked as the key's is. Variables the reference's train and eval scripts never let
 * through, or that we do not follow, are named with the reason. Only the chosen agent's variables
 * are read: one set for another agent changes nothing and says nothing.
 */
import { parseBool } from '../../config/overrides';
import { fieldSchema, type SkillOptConfig } from '../../config/schema';
import { SkillOptError } from '../../errors';
import type { AgentName } from './presets';

type ModelSection = SkillOptConfig['model'];
type FallbackKey = Extract<keyof ModelSection, string>;

/** Each agent's keys and the variables that stand in for them, first set wins (the reference's order). */
const FALLBACKS: Record<AgentName, ReadonlyArray<readonly [FallbackKey, readonly string[]]>> = {
  codex: [
    ['codex_exec_path', ['CODEX_EXEC_PATH', 'CODEX_CLI_BIN', 'CODEX_PATH']],
    ['codex_exec_sandbox', ['CODEX_EXEC_SANDBOX', 'CODEX_SANDBOX_MODE', 'CODEX_SANDBOX']],
    ['codex_exec_profile', ['CODEX_EXEC_PROFILE']],
    ['codex_exec_reasoning_effort', ['CODEX_EXEC_REASONING_EFFORT']],
    ['codex_exec_approval_policy', ['CODEX_EXEC_APPROVAL_POLICY']],
    ['codex_exec_network_access', ['CODEX_EXEC_NETWORK_ACCESS']],
    ['codex_exec_web_search', ['CODEX_EXEC_WEB_SEARCH']],
    ['codex_exec_use_sdk', ['CODEX_EXEC_USE_SDK']],
  ],
  claude: [['claude_code_exec_path', ['CLAUDE_CODE_EXEC_PATH']]],
  copilot: [
    ['copilot_exec_path', ['COPILOT_EXEC_PATH']],
    ['copilot_exec_allow_all_tools', ['COPILOT_EXEC_ALLOW_ALL_TOOLS']],
    ['copilot_exec_home', ['COPILOT_EXEC_HOME']],
  ],
};

/**
 * Claude Code's variables the reference reads at import but its train and eval scripts then
 * overwrite with the config's value (its default included), so they never take effect there.
 */
const OVERRIDDEN_BY_CONFIG: ReadonlyArray<readonly [string, FallbackKey]> = [
  ['CLAUDE_CODE_EXEC_PROFILE', 'claude_code_exec_profile'],
  ['CLAUDE_CODE_EXEC_EFFORT', 'claude_code_exec_effort'],
  ['CLAUDE_CODE_EXEC_MAX_THINKING_TOKENS', 'claude_code_exec_max_thinking_tokens'],
  ['CLAUDE_CODE_EXEC_USE_SDK', 'claude_code_exec_use_sdk'],
];

export interface AgentEnv {
  /** The model section with each blank key filled from its variable. */
  model: ModelSection;
  /** Key → the variable its value came from. */
  origin: ReadonlyMap<string, string>;
  /** One line per variable that matters: taking effect, overridden, or not followed and why. */
  notices: string[];
}

const blank = (v: unknown): boolean => v === undefined || v === null || v === '';
const shown = (v: unknown): string => (typeof v === 'string' && v !== '' ? v : JSON.stringify(v));

/** The variable's text as the key's type: a boolean key reads true/false/1/0/yes/no/on/off. */
function valueFor(key: FallbackKey, text: string): unknown {
  const field = fieldSchema('model', key)!;
  return field.safeParse(true).success ? (parseBool(text) ?? text) : text;
}

/** The program path the agent's variables give (CODEX_EXEC_PATH, then its aliases), for the picker too. */
export function pathFromEnv(agent: AgentName, vars: NodeJS.ProcessEnv): string | undefined {
  const names = FALLBACKS[agent].find(([key]) => key.endsWith('_exec_path'))?.[1] ?? [];
  return names.map((n) => vars[n]?.trim()).find((v) => !!v);
}

export function agentEnv(m: ModelSection, agent: AgentName, vars: NodeJS.ProcessEnv): AgentEnv {
  const model: Record<string, unknown> = { ...m };
  const origin = new Map<string, string>();
  const notices: string[] = [];
  const set = (name: string): string | undefined => vars[name]?.trim() || undefined;
  for (const [key, names] of FALLBACKS[agent]) {
    const given = names.filter((n) => set(n) !== undefined);
    if (given.length === 0) continue;
    if (!blank(m[key])) {
      for (const n of given)
        notices.push(`${n} is set, but model.${key} (${shown(m[key])}) wins over it, as in the reference`);
      continue;
    }
    const [winner, ...rest] = given;
    const text = set(winner)!;
    const value = valueFor(key, text);
    const field = fieldSchema('model', key)!;
    if (!field.safeParse(value).success) {
      throw new SkillOptError('config', `${winner} is '${text}', which model.${key} does not take`, {
        key: `model.${key}`,
        fix: `set ${winner} (or model.${key}) to ${field.description ?? 'a valid value'}, or unset it`,
      });
    }
    model[key] = value;
    origin.set(key, winner);
    notices.push(
      `${winner}=${text} stands for model.${key}, which the config leaves blank (as in the reference)`,
    );
    for (const n of rest) notices.push(`${n} is set, but ${winner} wins over it, as in the reference`);
  }
  if (agent === 'claude') {
    for (const [name, key] of OVERRIDDEN_BY_CONFIG) {
      if (set(name) === undefined) continue;
      notices.push(
        `${name} is not read: the reference's train and eval scripts overwrite it with model.${key} (here ${shown(m[key])}); set that key instead`,
      );
    }
  }
  if (agent === 'codex' && set('CODEX_EXEC_FULL_AUTO') !== undefined) {
    notices.push(
      'CODEX_EXEC_FULL_AUTO is retired (as in the reference) and has no effect; use model.codex_exec_sandbox and model.codex_exec_approval_policy',
    );
  }
  if (set('EXEC_EMPTY_RESPONSE_RETRIES') !== undefined) {
    const n = emptyAnswerRetries(vars);
    notices.push(
      `EXEC_EMPTY_RESPONSE_RETRIES=${n}: an agent run with an empty answer is run again ${n === 0 ? 'never' : `up to ${n} time(s), with a reminder to answer,`} as in the reference (default ${DEFAULT_EMPTY_ANSWER_RETRIES})`,
    );
  }
  return { model: model as ModelSection, origin, notices };
}

/** The variables SkillOpt itself reads for `agent` (the reference's), which are not the CLI's. */
export function referenceVariables(agent: AgentName): string[] {
  return [
    ...FALLBACKS[agent].flatMap(([, names]) => names),
    ...(agent === 'claude' ? OVERRIDDEN_BY_CONFIG.map(([name]) => name) : []),
    ...(agent === 'codex' ? ['CODEX_EXEC_FULL_AUTO'] : []),
  ];
}

/** The reference runs an agent once more when its final answer is empty (EXEC_EMPTY_RESPONSE_RETRIES). */
export const DEFAULT_EMPTY_ANSWER_RETRIES = 1;

/** How often an agent run with an empty answer is run again: EXEC_EMPTY_RESPONSE_RETRIES, else the default. */
export function emptyAnswerRetries(vars: NodeJS.ProcessEnv): number {
  const text = vars.EXEC_EMPTY_RESPONSE_RETRIES?.trim();
  if (!text) return DEFAULT_EMPTY_ANSWER_RETRIES;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0 || n > 10) {
    throw new SkillOptError(
      'config',
      `EXEC_EMPTY_RESPONSE_RETRIES is '${text}', not a whole number from 0 to 10`,
      {
        key: 'EXEC_EMPTY_RESPONSE_RETRIES',
        fix: `set it to how often an agent run with an empty answer is run again (0 never; default ${DEFAULT_EMPTY_ANSWER_RETRIES}), or unset it`,
      },
    );
  }
  return n;
}
