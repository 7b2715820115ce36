/**
 * OfficeQA as the reference runs it offline (`envs/officeqa/rollout.py`): each item's task shows the
 * question, the oracle pages its `source_docs` name, its candidate files and source links; with
 * `use_local_tools` (the default) the target then works through glob/read/grep over env.data_dirs
 * for up to env.max_tool_turns calls. The web-search modes are refused before anything is spent.
 */
import type { SkillOptConfig } from '../../config/schema';
import { idleKeysLine } from '../../config/idleKeys';
import { SkillOptError } from '../../errors';
import type { ModelClient } from '../../llm/types';
import type { TargetTurns } from '../../train/turns/types';
import { officeQaList } from '../benchmarkRecords';
import type { TaskItem } from '../tasks';
import { DOC_TOOL_SPECS, DocCorpus, docsRoots } from './docTools';
import { agentTurns, type AgentDocs } from './agentTask';
import { oracleContext } from './oracle';

/** Candidate files listed in the task, as the reference lists them. */
const MAX_LISTED_FILES = 20;

const TOOLS_NOTE = [
  '## Document tools',
  'The question is about local document files. You can call `glob` to find files, `grep` to find lines in one',
  'file and `read` to read a window of lines. Search before you read long passages, read around what you found,',
  'and take every figure from text you retrieved; calculate only once you have the exact operands. Use the tools',
  'without asking first. When you have the answer, give it as the final answer and call no further tool.',
].join('\n');

const NO_TOOLS_NOTE = [
  '## Evidence',
  'Answer from the oracle pages and source links in the task. You cannot call any tool or search the web.',
].join('\n');

/** The reference's spellings of the modes; anything else it would read as offline, which we refuse to guess. */
function searchMode(value: unknown): 'offline' | 'custom_search' | 'azure_search' | undefined {
  const v = (typeof value === 'string' ? value : '').trim().toLowerCase();
  if (v === '' || v === 'offline') return 'offline';
  if (v === 'custom' || v === 'custom_search') return 'custom_search';
  if (v === 'azure' || v === 'azure_search') return 'azure_search';
  return undefined;
}

/** The env keys OfficeQA reads, typed by the config schema (absent = the reference's defaults). */
type OfficeQaEnv = Partial<
  Pick<
    SkillOptConfig['env'],
    'data_dirs' | 'docs_dirs' | 'search_mode' | 'use_local_tools' | 'max_tool_turns' | SearchKey
  >
>;

/**
 * The keys only OfficeQA's custom web search reads (refused above), at the values the reference's
 * officeqa/default.yaml spells out for its offline runs: those say nothing, any other is named.
 */
const SEARCH_KEYS = {
  max_queries_per_turn: 4,
  search_api_url: 'http://apisix.westus2.cloudapp.azure.com/search_tool/search',
  search_auth_env: 'OFFICEQA_CUSTOM_SEARCH_AUTH',
  search_provider: 'duckduckgo',
  search_max_num_results: 4,
  search_timeout_seconds: 20,
} as const;
type SearchKey = keyof typeof SEARCH_KEYS;

function idleSearchKeys(env: OfficeQaEnv): string[] {
  const changed = (Object.keys(SEARCH_KEYS) as SearchKey[]).filter(
    (k) => env[k] !== undefined && env[k] !== SEARCH_KEYS[k],
  );
  if (!changed.length) return [];
  return [
    idleKeysLine(
      changed.map((k) => `env.${k}`),
      "OfficeQA's web search",
      'env.search_mode: custom, which this tool does not run',
      'search_mode is offline',
    ),
  ];
}

function dirsOf(env: OfficeQaEnv): string[] {
  const value = env.data_dirs ?? env.docs_dirs;
  return Array.isArray(value) ? value.map(String) : typeof value === 'string' && value ? [value] : [];
}

/**
 * The turn plan of an OfficeQA run, or a refusal naming the key, the reason and the way out. An agent
 * target gets the documents in its workspace instead of our tools (agentTask.ts).
 */
export function officeQaTurns(
  env: OfficeQaEnv,
  target: Pick<ModelClient, 'backend' | 'acceptsTools'>,
): { turns?: TargetTurns; notices: string[] } {
  const mode = searchMode(env.search_mode);
  if (mode !== 'offline') {
    throw new SkillOptError(
      'config',
      mode
        ? `env.search_mode ${String(env.search_mode)} needs ${mode === 'custom_search' ? "the reference's web search service (env.search_api_url)" : "the model's built-in web search"}, which this tool does not call`
        : `env.search_mode ${JSON.stringify(env.search_mode)} is not one of OfficeQA's modes`,
      {
        key: 'env.search_mode',
        fix: 'use search_mode: offline (the default): the document tools over env.data_dirs with the oracle pages',
      },
    );
  }
  const dirs = dirsOf(env);
  if (!dirs.length) {
    throw new SkillOptError('config', 'env.data_dirs names no folder: OfficeQA answers from its documents', {
      key: 'env.data_dirs',
      fix: "set env.data_dirs to the folder of OfficeQA's parsed Treasury bulletins (transformed/ text files, jsons/ parsed pages)",
    });
  }
  const tools = env.use_local_tools !== false;
  const agent = target.backend === 'command';
  if (tools && !agent && !target.acceptsTools) {
    throw new SkillOptError(
      'config',
      `officeqa's document tools need a target that calls functions, and the ${target.backend} target does not`,
      {
        key: 'model.target_backend',
        fix: 'use openai, azure_openai or anthropic as the target, or set env.use_local_tools: false to answer from the oracle pages alone',
      },
    );
  }
  const roots = docsRoots(dirs);
  const corpus = new DocCorpus(roots);
  const maxTurns = env.max_tool_turns ?? 12;
  const note = tools
    ? 'Treat them as primary evidence, and use the document tools for anything else you need.'
    : 'Treat them as primary evidence for your answer.';
  const sources = (item: TaskItem): { files: string[]; docs: string[] } => ({
    files: officeQaList(item.fields.source_files),
    docs: officeQaList(item.fields.source_docs),
  });
  const taskMessage = (item: TaskItem, agentDocs?: AgentDocs): string => {
    const { files, docs } = sources(item);
    const parts = [`## Question\n${item.input}`];
    const oracle = oracleContext(files, docs, roots, agentDocs?.oracleNote ?? note);
    if (oracle) parts.push(`## Oracle pages\n${oracle}`);
    if (agentDocs?.corpusNote) parts.push(`## Document corpus\n${agentDocs.corpusNote}`);
    const listed = corpus
      .candidates(files)
      .slice(0, MAX_LISTED_FILES)
      .map((f) => agentDocs?.path(f) ?? f);
    parts.push(
      `## Candidate files\n${listed.length ? listed.map((f) => `- ${f}`).join('\n') : '- none found'}`,
    );
    if (docs.length) parts.push(`## Source pages\n${docs.map((d) => `- ${d}`).join('\n')}`);
    return parts.join('\n\n');
  };
  const idle = idleSearchKeys(env);
  if (agent) {
    const planned = agentTurns(roots, tools, maxTurns, taskMessage);
    return { ...planned, notices: [...planned.notices, ...idle] };
  }
  const notices = [
    ...idle,
    tools
      ? `officeqa: offline, as the reference runs it: oracle pages from the items' source_docs, and up to ${maxTurns} target calls per item with glob/read/grep over ${roots.join(', ')} (the call estimate counts all of them, the cost range one call per item at its low end)`
      : `officeqa: offline without local tools: one call per item with the oracle pages from its source_docs (${roots.join(', ')})`,
  ];
  return {
    notices,
    turns: {
      taskMessage,
      systemNote: tools ? TOOLS_NOTE : NO_TOOLS_NOTE,
      ...(tools
        ? {
            tools: {
              specs: DOC_TOOL_SPECS,
              maxTurns,
              forItem: (item) => {
                // The reference limits an item's tools to its candidate files (any file when it names none).
                const allowed = new Set(
                  corpus.candidates(sources(item).files).map((p) => p.split(/[\\/]/).pop()!),
                );
                return { run: (call) => corpus.run(call, allowed) };
              },
            },
          }
        : {}),
    },
  };
}
