/**
 * The skillopt.yaml the guided setup writes. Pure (no `vscode`), so the text is unit-tested and
 * loads with the engine's config loader. Paths are relative to the config file.
 */
import { API_KEY_ENV_VARS, type BackendKind, type KeyProvider } from '../../protocol/vocabulary';
import { isAgentBackend, type AgentBackend } from './agentTargets';

/**
 * Every backend but a custom agent command (set up by hand), plus OpenAI-compatible servers and
 * the agent CLIs (target only).
 */
export type SetupBackend = Exclude<BackendKind, 'command'> | 'openai-compatible' | AgentBackend;

export interface RoleChoice {
  backend: SetupBackend;
  model: string;
  /** OpenAI-compatible servers: their `/v1` URL. */
  baseUrl?: string;
}

export interface SetupAnswers {
  /** env.name: names the run folders. */
  name: string;
  /** The skill, relative to the config's folder. */
  skill: string;
  data: { mode: 'ratio'; path: string } | { mode: 'split_dir'; dir: string };
  scorer: string;
  target: RoleChoice;
  optimizer: RoleChoice;
  epochs: number;
  /** Azure OpenAI resource endpoint, when a role uses it. */
  azureEndpoint?: string;
}

/** Backends the setup offers, with what they need. */
export const setupBackends: ReadonlyArray<{
  id: SetupBackend;
  label: string;
  detail: string;
  defaultModel: { target: string; optimizer: string };
  needsKey?: KeyProvider;
}> = [
  {
    id: 'sim',
    label: 'Simulated models (offline demo)',
    detail:
      'No model calls and no key: a deterministic stand-in to see the loop work. Scores are not meaningful.',
    defaultModel: { target: 'sim-target', optimizer: 'sim-optimizer' },
  },
  {
    id: 'vscode-lm',
    label: 'VS Code language model (GitHub Copilot)',
    detail:
      'Uses a chat model VS Code already has; no API key. "auto" = the model chosen with Select Copilot Model.',
    defaultModel: { target: 'auto', optimizer: 'auto' },
  },
  {
    id: 'openai',
    label: 'OpenAI API',
    detail: `Needs an OpenAI key (SkillOpt: Set API Key, or ${API_KEY_ENV_VARS.openai}).`,
    defaultModel: { target: 'gpt-4.1-mini', optimizer: 'gpt-4.1' },
    needsKey: 'openai',
  },
  {
    id: 'openai-compatible',
    label: 'OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp)',
    detail: 'Any server that speaks the Chat Completions API at a base URL.',
    defaultModel: { target: 'llama3.1', optimizer: 'llama3.1' },
  },
  {
    id: 'azure_openai',
    label: 'Azure OpenAI',
    detail: `Needs the resource endpoint and a key (SkillOpt: Set API Key, or ${API_KEY_ENV_VARS.azure_openai}).`,
    defaultModel: { target: 'gpt-4.1-mini', optimizer: 'gpt-4.1' },
    needsKey: 'azure_openai',
  },
  {
    id: 'anthropic',
    label: 'Anthropic API',
    detail: `Needs an Anthropic key (SkillOpt: Set API Key, or ${API_KEY_ENV_VARS.anthropic}).`,
    defaultModel: { target: 'claude-haiku-4-5', optimizer: 'claude-sonnet-4-5' },
    needsKey: 'anthropic',
  },
];

/** Scorers that need no options, with a one-line explanation each. */
export const setupScorers: ReadonlyArray<{ id: string; detail: string }> = [
  {
    id: 'normalized_exact',
    detail: 'The answer equals the expected one, ignoring case, spacing and punctuation',
  },
  { id: 'exact', detail: 'The answer equals the expected one character for character' },
  { id: 'contains', detail: 'The answer contains the expected text' },
  { id: 'numeric', detail: 'The answer is the expected number' },
  { id: 'choice', detail: 'Multiple choice: the chosen letter or option matches' },
  { id: 'f1', detail: 'Token overlap with the expected answer (partial credit)' },
  { id: 'anls', detail: 'Normalised edit-distance similarity (partial credit)' },
  { id: 'json', detail: 'The answer parses as JSON equal to the expected value' },
];

/** A YAML scalar: plain when unambiguous, double-quoted (JSON rules) otherwise. */
export function yamlScalar(value: string): string {
  const plain = /^[A-Za-z_./][A-Za-z0-9_./-]*$/.test(value);
  const reserved = /^(true|false|yes|no|on|off|null|~)$/i.test(value);
  return plain && !reserved ? value : JSON.stringify(value);
}

function backendName(b: SetupBackend): string {
  // OpenAI-compatible servers run through the OpenAI transport with a base URL.
  return b === 'openai-compatible' ? 'openai' : b;
}

export function renderConfig(a: SetupAnswers): string {
  const lines: string[] = [
    '# SkillOpt training config, written by "SkillOpt: Optimize This Skill".',
    '# Every key is documented in the README; paths are relative to this file.',
    'model:',
    `  optimizer_backend: ${yamlScalar(backendName(a.optimizer.backend))}`,
    `  optimizer: ${yamlScalar(a.optimizer.model)}`,
    `  target_backend: ${yamlScalar(backendName(a.target.backend))}`,
  ];
  if (isAgentBackend(a.target.backend)) {
    lines.push(
      "  # The agent CLI runs each task in an isolated home (README: Agent targets); empty = the CLI's default model.",
    );
  }
  lines.push(`  target: ${yamlScalar(a.target.model)}`);
  if (a.optimizer.baseUrl) lines.push(`  optimizer_base_url: ${yamlScalar(a.optimizer.baseUrl)}`);
  if (a.target.baseUrl) lines.push(`  target_base_url: ${yamlScalar(a.target.baseUrl)}`);
  if (a.azureEndpoint) lines.push(`  azure_openai_endpoint: ${yamlScalar(a.azureEndpoint)}`);
  lines.push(
    '',
    'train:',
    `  num_epochs: ${a.epochs}`,
    '  # Tasks rolled out per step; smaller batches mean more, cheaper steps.',
    '  batch_size: 8',
    '  seed: 42',
    '',
    'optimizer:',
    '  # At most this many edits per step (decays towards min_learning_rate).',
    '  learning_rate: 3',
    '  min_learning_rate: 1',
    '',
    'env:',
    `  name: ${yamlScalar(a.name)}`,
    `  skill_init: ${yamlScalar(a.skill)}`,
  );
  if (a.data.mode === 'ratio') {
    lines.push(
      '  split_mode: ratio',
      `  data_path: ${yamlScalar(a.data.path)}`,
      '  # train:selection:test shares of the tasks.',
      '  split_ratio: "4:3:3"',
    );
  } else {
    lines.push('  split_mode: split_dir', `  split_dir: ${yamlScalar(a.data.dir)}`);
  }
  lines.push(`  scorer: ${yamlScalar(a.scorer)}`, '');
  return lines.join('\n');
}

/** A name for env.name from the skill's folder: letters, digits, `-` and `_`. */
export function suggestName(folderName: string): string {
  const cleaned = folderName
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return cleaned || 'skill';
}
