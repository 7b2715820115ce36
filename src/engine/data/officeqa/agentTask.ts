/**
 * OfficeQA for an agent target (claude_code_exec, codex_exec, copilot_exec, command), as the
 * reference's exec targets get it (`envs/officeqa/rollout.py::_run_codex_once`): every document
 * folder in the item's workspace as `docs/root_N`, the task with the oracle pages, the candidate
 * files as workspace paths (hints, not a limit) and the source links. The agent searches with its own
 * tools; our glob/read/grep are for chat targets. The folders are copied read-only per task
 * (llm/agents/docFolders.ts), checked here before anything is spent.
 */
import { relative, sep } from 'node:path';
import { listFolder, MAX_FOLDER_FILE_BYTES } from '../../llm/agents/docFolders';
import type { TaskItem } from '../tasks';
import type { TargetTurns } from '../../train/turns/types';

/** How an agent's task names the documents: workspace paths and the corpus note. */
export interface AgentDocs {
  path(real: string): string;
  corpusNote?: string;
  oracleNote: string;
}

const CORPUS_NOTE = [
  'Every document of the corpus is in your working folder under `docs/` (a read-only copy: one `docs/root_N`',
  'folder per document folder). The candidate files below are where the answer is likely to be, not a limit:',
  'search the whole of `docs/` when you need more. Take every figure from text you read there.',
].join('\n');

const DOCS_OWNER = {
  key: 'env.data_dirs',
  fix: 'remove the link, or point env.data_dirs at a folder that holds the documents themselves',
};

/** The workspace name of the Nth document folder, as the reference links them. */
export function agentDocsName(index: number): string {
  return `docs/root_${index + 1}`;
}

/** A real path under one of the roots as the agent finds it in its workspace; others unchanged. */
export function workspaceDocPath(real: string, roots: readonly string[]): string {
  for (const [i, root] of roots.entries()) {
    const rel = relative(root, real);
    if (rel && !rel.startsWith('..') && !rel.startsWith(sep)) {
      return `${agentDocsName(i)}/${rel.split(sep).join('/')}`;
    }
  }
  return real;
}

export function agentTurns(
  roots: readonly string[],
  tools: boolean,
  maxToolTurns: number,
  taskMessage: (item: TaskItem, docs: AgentDocs) => string,
): { turns: TargetTurns; notices: string[] } {
  if (!tools) {
    // The reference has no agent path without its tools; the oracle pages alone are what remains.
    return {
      turns: {
        taskMessage: (item) =>
          taskMessage(item, {
            path: (real) => real.split(sep).pop() ?? real,
            oracleNote: 'Treat them as primary evidence for your answer.',
          }),
      },
      notices: [
        'officeqa: env.use_local_tools is false, so the agent target gets the question and the oracle pages from its source_docs, without the documents in its workspace',
      ],
    };
  }
  // Refused here, before any call, when a folder links out or is too large to copy into every task.
  const listings = roots.map((root) => listFolder(root, DOCS_OWNER));
  const folders = listings.map((l, i) => ({ name: agentDocsName(i), path: l.root, digest: l.digest }));
  const files = listings.reduce((n, l) => n + l.files.length, 0);
  const mib = listings.reduce((n, l) => n + l.bytes, 0) / 2 ** 20;
  const skipped = listings.flatMap((l) => l.skipped);
  const docs: AgentDocs = {
    path: (real) => workspaceDocPath(real, roots),
    corpusNote: CORPUS_NOTE,
    oracleNote:
      'Treat them as primary evidence, and search the documents under docs/ for anything else you need.',
  };
  return {
    turns: { taskMessage: (item) => taskMessage(item, docs), agentFolders: folders },
    notices: [
      `officeqa: the agent target finds the documents of ${roots.join(', ')} read-only in each item's workspace under docs/ (${files} files, ${mib.toFixed(1)} MiB copied per item), with the oracle pages and candidate files in its task, as the reference's exec targets do; it searches with its own tools in one run per item (env.max_tool_turns ${maxToolTurns} bounds chat targets only; the reference reruns an agent that gave no <answer>, this does not)`,
      ...(skipped.length
        ? [
            `officeqa: ${skipped.length} document file(s) over ${MAX_FOLDER_FILE_BYTES / 2 ** 20} MiB are left out of the agent's copy (the document tools do not read them either): ${skipped.slice(0, 5).join(', ')}`,
          ]
        : []),
    ],
  };
}
