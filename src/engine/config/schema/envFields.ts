import { z } from 'zod';
import { SPLIT_MODES } from './enums';
import { splitRatioProblem } from '../../data/splitRatio';
import { flag, int, oneOf, positive, text } from './fields';

/**
 * The `env:` section: every key the engine or a benchmark loader reads, typed. The reference passes
 * env keys to its adapters by constructor parameter name, so each of its benchmarks' keys is here
 * too (BENCHMARK_ENV_KEYS says which benchmark reads it); a key outside this list is refused by
 * validate with "did you mean", never passed through unread.
 */

const optionalFlag = () => z.boolean().optional().describe('true or false');
const optionalInt = (min: number) => z.number().int().min(min).optional().describe(`an integer ≥ ${min}`);
const optionalText = () => z.string().optional().describe('a string');

export const envFields = {
  // Names run and split folders, so it must stay one folder name (`../..` would write outside the run).
  name: z
    .string()
    .regex(/^(?:[A-Za-z0-9_-][A-Za-z0-9 ._-]*)?$/)
    .default('')
    .describe('a folder name: letters, digits, spaces, ".", "_" and "-", not starting with "." or a space'),
  skill_init: text(''),
  // A skill is a prompt: a file this large is almost surely the wrong file, and every call would pay for it.
  max_skill_bytes: z
    .number()
    .int()
    .min(1)
    .default(200_000)
    .describe('an integer ≥ 1 (the largest env.skill_init file accepted, in bytes)'),
  out_root: text(''),
  split_mode: oneOf(SPLIT_MODES, 'ratio'),
  // Read as the reference reads it ("2 : 1 : 7" too); a refusal says what is wrong and what to write.
  split_ratio: z
    .string()
    .superRefine((v, ctx) => {
      const problem = splitRatioProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem.message, params: { fix: problem.fix } });
    })
    .default('2:1:7')
    .describe('three positive integers "train:val:test", e.g. "2:1:7"'),
  // 0 = train.seed, as in the reference (data/splitRatio.ts effectiveSplitSeed).
  split_seed: z.number().int().default(42).describe('an integer'),
  split_dir: text(''),
  data_path: text(''),
  split_output_dir: text(''),
  exec_timeout: positive(120),
  limit: int(0, 0),
  // Absent = limits.target_concurrency decides.
  workers: z.number().int().min(1).optional().describe('an integer ≥ 1'),
  max_turns: int(1, 1),
  max_completion_tokens: int(16384, 1),
  // OfficeQA (data/officeqa/env.ts): the document folders, the tool loop's turns, local tools or the
  // oracle pages alone, and the search mode (only `offline` runs here).
  data_dirs: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe('a folder, or a list of folders, of OfficeQA documents'),
  docs_dirs: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe('a folder, or a list of folders, of OfficeQA documents (used when data_dirs is absent)'),
  max_tool_turns: int(12, 1),
  use_local_tools: flag(true),
  search_mode: text('offline'),
  // OfficeQA's web search (search_mode custom, refused): typed so a reference config loads; offline
  // reads none of them, in the reference too.
  max_queries_per_turn: optionalInt(1),
  search_api_url: optionalText(),
  search_auth_env: optionalText(),
  search_provider: optionalText(),
  search_max_num_results: optionalInt(1),
  search_timeout_seconds: z.number().positive().optional().describe('a number > 0'),
  // OpenAI's image detail for task images (DocVQA's key; data/benchmarkRun.ts withImageDetail); absent = auto.
  image_detail: z.enum(['auto', 'low', 'high']).optional().describe('one of: auto, low, high'),
  // LiveMathematicianBench (data/benchmarks.ts): absent = the reference's defaults (true, false, false).
  shuffle_choices: optionalFlag(),
  use_theorem: optionalFlag(),
  use_sketch: optionalFlag(),
  // SpreadsheetBench and ALFWorld: env.name naming them is refused before any call (data/benchmarks.ts).
  data_root: optionalText(),
  mode: optionalText(),
  max_steps: optionalInt(1),
  max_api_workers: optionalInt(1),
  // Ours.
  scorer: z
    .union([z.string().trim().min(1), z.looseObject({ type: z.string().trim().min(1) })])
    .default('normalized_exact')
    .describe('a scorer name such as normalized_exact, or a mapping {type: <name>, ...options}'),
  answer_tag: text('answer'),
  target_system_prompt: text(''),
};

export type EnvKey = keyof typeof envFields;

/** The env keys only one reference benchmark reads (by its `env.name`); elsewhere they do nothing. */
export const BENCHMARK_ENV_KEYS: Readonly<Record<string, readonly EnvKey[]>> = {
  livemathematicianbench: ['shuffle_choices', 'use_theorem', 'use_sketch'],
  officeqa: [
    'data_dirs',
    'docs_dirs',
    'max_tool_turns',
    'use_local_tools',
    'search_mode',
    'max_queries_per_turn',
    'search_api_url',
    'search_auth_env',
    'search_max_num_results',
    'search_provider',
    'search_timeout_seconds',
  ],
  spreadsheetbench: ['data_root', 'mode'],
  alfworld: ['max_steps', 'max_api_workers'],
};
