/**
 * Model keys only one backend reads (an agent CLI's *_exec_* keys, the Qwen, MiniMax and
 * OpenAI-compatible settings), set for a run whose roles do not use that backend: one line per
 * backend at validate and the run's start, worded as the benchmark keys' (config/idleKeys.ts).
 */
import { idleKeysLine, keysSet } from '../config/idleKeys';
import type { SkillOptConfig } from '../config/schema';
import { dispositionOf } from '../config/schema/disposition';
import { modelFields } from '../config/schema/sections';
import { PRESETS, type AgentName } from './agents/presets';
import type { ChatFamily } from './chatFamilies';

type ModelKey = keyof typeof modelFields;

/** What a role runs: its configured name, the chat family it resolved to, the agent preset. */
export interface RoleInUse {
  name: string;
  family?: ChatFamily;
  agent?: AgentName;
}

interface Group {
  owner: string;
  needs: string;
  prefix: string;
  /** A value that means the default, spelt otherwise (the reference's default.yaml: `claude_code_exec_path: claude`). */
  inert?: (key: string, value: unknown) => boolean;
  used: (roles: { optimizer: RoleInUse; target: RoleInUse }) => boolean;
}

const FAMILY_BACKENDS: Record<ChatFamily, string> = {
  qwen: 'qwen_chat',
  minimax: 'minimax_chat',
  openai_compatible: 'openai_compatible',
};
const FAMILY_PREFIXES: Record<ChatFamily, string> = {
  qwen: 'qwen_chat_',
  minimax: 'minimax_',
  openai_compatible: 'openai_compatible_',
};

const GROUPS: readonly Group[] = [
  ...Object.values(PRESETS).map((p): Group => ({
    owner: `the ${p.backend} target`,
    needs: `model.target_backend: ${p.backend}`,
    prefix: `${p.backend}_`,
    inert: (k, v) => k === p.pathKey && v === p.program,
    used: (r) => r.target.agent === p.name,
  })),
  ...(Object.keys(FAMILY_BACKENDS) as ChatFamily[]).flatMap((f): Group[] => [
    {
      owner: `the ${FAMILY_BACKENDS[f]} backend`,
      needs: `model.optimizer_backend or target_backend: ${FAMILY_BACKENDS[f]}`,
      prefix: FAMILY_PREFIXES[f],
      used: (r) => r.optimizer.family === f || r.target.family === f,
    },
    ...(['optimizer', 'target'] as const).map((role): Group => ({
      owner: `the ${role}'s ${FAMILY_BACKENDS[f]} backend`,
      needs: `model.${role}_backend: ${FAMILY_BACKENDS[f]}`,
      prefix: `${role}_${FAMILY_PREFIXES[f]}`,
      used: (r) => r[role].family === f,
    })),
  ]),
];

/** Only keys honoured as such: refused and mapped ones have their own message (disposition.ts). */
const keysOf = (prefix: string): ModelKey[] =>
  (Object.keys(modelFields) as ModelKey[]).filter(
    (k) => k.startsWith(prefix) && dispositionOf(`model.${k}`)?.kind === 'honoured',
  );

export function idleBackendKeyNotices(
  m: SkillOptConfig['model'],
  roles: { optimizer: RoleInUse; target: RoleInUse },
): string[] {
  const current = `the optimizer is ${roles.optimizer.name}, the target ${roles.target.name}`;
  const lines: string[] = [];
  for (const g of GROUPS) {
    if (g.used(roles)) continue;
    const set = keysSet(m, modelFields, keysOf(g.prefix)).filter((k) => !g.inert?.(k, m[k]));
    if (set.length > 0)
      lines.push(
        idleKeysLine(
          set.map((k) => `model.${k}`),
          g.owner,
          g.needs,
          current,
        ),
      );
  }
  return lines;
}
