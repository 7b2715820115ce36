/**
 * The reference's benchmarks by `env.name`: how their plain data files are read, how they are scored
 * by default, and which ones need machinery this tool does not run (refused before anything is paid).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { SkillOptConfig } from '../config/schema';
import { SkillOptError } from '../errors';
import type { ScorerSpec } from '../scoring/scorers';
import { docVqaRecord, liveMathItem, officeQaRecord, type TaskRecord } from './benchmarkRecords';
import type { TaskFile } from './taskFiles';
import { isRecord } from './taskFiles';

export interface Benchmark {
  /** The reference's environment name. */
  name: string;
  /** Scorer used when env.scorer is not set: the reference evaluator's rule. */
  scorer: ScorerSpec;
  /** The benchmark loader's reading of a record; undefined drops it, as that loader does. */
  mapRecord?: (record: TaskRecord, index: number) => TaskRecord | undefined;
  /** Ratio mode: read env.data_path when it is the benchmark's raw layout (LiveMath monthly files). */
  readRaw?: (dataPath: string) => TaskFile;
  /** Per-seed choice order (LiveMathematicianBench `shuffle_choices`). */
  shuffleChoices: boolean;
  /** Records the benchmark's loader skipped (counted for a notice). */
  dropped: () => number;
  /** One line each: what is read or scored differently from a plain task file, or not run here. */
  notices: string[];
}

const AGENT_FIX =
  'train such tasks through an agent target (model.target_backend: claude_code_exec, codex_exec, copilot_exec or command; see the README, "Agent targets"), with a task file describing each job and a command or module scorer that checks the result';

/** Benchmarks whose tasks need a simulator or code execution: the reference runs them with its own harness. */
const NEEDS_HARNESS: Record<string, string> = {
  alfworld: 'the ALFWorld text-game simulator (the alfworld package and $ALFWORLD_DATA)',
  spreadsheetbench: 'generated code executed against spreadsheet test cases',
  swebench: 'code executed against the repository under test',
};

function key(name: string): string {
  return name.toLowerCase().replace(/[-_\s]/g, '');
}

/** The benchmark `env.name` names, or undefined for a plain task file. Refuses benchmarks we cannot run. */
export function benchmarkFor(
  env: Pick<SkillOptConfig['env'], 'name' | 'shuffle_choices' | 'use_theorem' | 'use_sketch'>,
): Benchmark | undefined {
  const k = key(env.name);
  if (k in NEEDS_HARNESS) {
    throw new SkillOptError(
      'config',
      `benchmark "${env.name}" needs ${NEEDS_HARNESS[k]}, which this tool does not run`,
      { key: 'env.name', fix: AGENT_FIX },
    );
  }
  let dropped = 0;
  const counted =
    (map: (r: TaskRecord, i: number) => TaskRecord | undefined) =>
    (r: TaskRecord, i: number): TaskRecord | undefined => {
      const out = map(r, i);
      if (out === undefined) dropped++;
      return out;
    };
  const base = { dropped: () => dropped, shuffleChoices: false, notices: [] as string[] };
  switch (k) {
    case 'searchqa':
      return { ...base, name: 'searchqa', scorer: 'normalized_exact' };
    case 'docvqa':
      return {
        ...base,
        name: 'docvqa',
        scorer: 'anls',
        mapRecord: docVqaRecord,
        notices: [
          "docvqa: answers read as Python list literals, page images from image_path or the question's document_path",
        ],
      };
    case 'officeqa':
      return {
        ...base,
        name: 'officeqa',
        scorer: 'officeqa',
        mapRecord: officeQaRecord,
        // Its document tools and oracle pages: data/officeqa/env.ts, with their own notice.
      };
    case 'livemathematicianbench': {
      // Typed by the config schema (envFields.ts); absent = the reference adapter's defaults.
      const useTheorem = env.use_theorem ?? false;
      const useSketch = env.use_sketch ?? false;
      return {
        ...base,
        name: 'livemathematicianbench',
        scorer: 'choice',
        shuffleChoices: env.shuffle_choices ?? true,
        mapRecord: counted((r, i) => liveMathTask(r, i, useTheorem, useSketch)),
        readRaw: readLiveMathRaw,
      };
    }
    default:
      return undefined;
  }
}

function liveMathTask(
  rec: TaskRecord,
  index: number,
  useTheorem: boolean,
  useSketch: boolean,
): TaskRecord | undefined {
  const n = liveMathItem(rec, index);
  if (!n) return undefined;
  const choices = n.choices as { label: string; text: string }[];
  const types = n.theorem_type as string[];
  const context = [
    useTheorem && typeof n.theorem === 'string' && n.theorem ? `Theorem:\n${n.theorem}` : '',
    useSketch && typeof n.sketch === 'string' && n.sketch ? `Proof sketch:\n${n.sketch}` : '',
  ].filter((s) => s !== '');
  // The reference reads split items as they are, so an item's own id names it and seeds its choice
  // shuffle; monthly items (normalised by readLiveMathRaw, which drops any id) are month:no.
  const own = typeof rec.id === 'number' ? String(rec.id) : typeof rec.id === 'string' ? rec.id : '';
  return {
    id: own !== '' ? own : n.id,
    question: n.question,
    answer: (n.correct_choice as { label: string }).label,
    choices: choices.map((c) => c.text),
    choice_labels: choices.map((c) => c.label),
    task_type: types[0] ?? 'math_mcq',
    ...(context.length ? { context: context.join('\n\n') } : {}),
  };
}

/** Monthly files: one `qa_*_final.json` or a folder holding them (any depth), read in path order. */
function readLiveMathRaw(dataPath: string): TaskFile {
  const files = statSync(dataPath).isFile() ? [dataPath] : monthlyFiles(dataPath).sort();
  if (files.length === 0) {
    throw new SkillOptError('tasks', 'No LiveMathematicianBench monthly files (qa_*_final.json) found', {
      file: dataPath,
      fix: 'point env.data_path at a qa_<month>_final.json file or a folder holding them',
    });
  }
  const records: TaskFile['records'] = [];
  for (const file of files) {
    let rows: unknown;
    try {
      rows = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new SkillOptError('tasks', `Not valid JSON: ${(err as Error).message}`, {
        file,
        fix: 'use the monthly files as published (a JSON array of items)',
      });
    }
    if (!Array.isArray(rows)) {
      throw new SkillOptError('tasks', 'Expected a JSON array of items', {
        file,
        fix: 'use the monthly file as published',
      });
    }
    const name = files.length > 1 ? relative(dataPath, file) : '';
    rows.forEach((row: unknown, i) => {
      // The reference writes the normalised items into the generated split; so do we.
      const item = isRecord(row) ? liveMathItem(row, i) : undefined;
      if (item) records.push({ record: item, key: `${name}[${i}]` });
    });
  }
  return { path: dataPath, format: 'json', records };
}

function monthlyFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...monthlyFiles(path));
    else if (/^qa_.*_final\.json$/.test(entry.name)) out.push(path);
  }
  return out;
}
