import { basename, join, resolve } from 'node:path';
import { SkillOptError } from '../errors';
import { writeJsonAtomic } from '../store/atomic';
import { PyRandom } from './pyRandom';
import { readTaskRecords, type TaskFile } from './taskFiles';
import { toTaskItems } from './tasks';
import type { LoadTasksOptions, TaskItem } from './tasks';
import { RUN_FILE } from '../store/layout';
import { computeSplitCounts, parseSplitRatio } from './splitRatio';
import { recordsDigest } from './digest';
import {
  aliasesOf,
  findDataFile,
  findSplitSubdir,
  isDir,
  readManifest,
  refuseIdManifest,
  resolveDataFile,
  splitNames,
  type SplitManifest,
  type SplitName,
  unreadDataFiles,
} from './splitFolders';

export { canonicalSplitName, splitNames, type SplitManifest, type SplitName } from './splitFolders';

/**
 * The held-out test split, sealed. Training code gets this object, not the items: the only way to the
 * tasks is `unsealForEvaluation()`, which the final test evaluation and eval-only call. That keeps test
 * items out of rollouts, reflection prompts and slow-update samples by construction, and makes every
 * place that does read them easy to find. `ids` lets callers assert that no test item leaks elsewhere.
 */
export class SealedSplit {
  readonly size: number;
  readonly ids: ReadonlySet<string>;
  readonly #items: readonly TaskItem[];

  constructor(items: readonly TaskItem[]) {
    this.#items = Object.freeze([...items]);
    this.size = items.length;
    this.ids = new Set(items.map((i) => i.id));
  }

  unsealForEvaluation(): readonly TaskItem[] {
    return this.#items;
  }

  toJSON(): { size: number } {
    return { size: this.size };
  }
}

export interface LoadedSplits {
  train: TaskItem[];
  val: TaskItem[];
  test: SealedSplit;
  /** `split_manifest.json` of the split folder, or null when there is none. */
  manifest: SplitManifest | null;
  /** The folder the splits were read from (the generated one in ratio mode). */
  splitDir: string;
  /** The file each split was read from. */
  files: Record<SplitName, string>;
  /** How the user's eval files were read (formats recognised, options mapped), for the run's notices. */
  notices?: string[];
  /**
   * Rows with `should_trigger` (the activation track's queries), kept out of every body split:
   * `pool` may become trigger queries (all of a ratio split's, a split folder's train/ and val/);
   * `sealed` are a split folder's test/ rows, only counted.
   */
  triggers?: { pool: TaskItem[]; sealed: TaskItem[] };
  /** A ratio split: the source file and the hash of all its records (data/digest.ts). */
  source?: { file: string; sha256: string };
  /**
   * A ratio split loaded with `deferWrite`: writes its files. A run calls it once it has checked
   * that its folder holds no run of other data, so a refused resume leaves the folder as it was.
   */
  persist?: () => void;
}

export interface SplitLoadOptions {
  /** Keep only the first `limit` items of every split (0 or absent: all). */
  limit?: number;
  /** Default true: every task needs an expected answer. */
  requireAnswers?: boolean;
  /** Default true: an empty test split is an error because the final evaluation would have nothing to run. */
  testEvaluation?: boolean;
  /** A reference benchmark's reading of its records (benchmarks.ts). */
  mapRecord?: LoadTasksOptions['mapRecord'];
  /** Folders relative image paths are also looked up in. */
  imageDirs?: readonly string[];
  /** env.scorer gets every field of a task (module, command). */
  scorerSeesFields?: boolean;
}

export interface SplitDirOptions extends SplitLoadOptions {
  splitDir: string;
}

export interface RatioSplitOptions extends SplitLoadOptions {
  /** One data file, or a folder holding exactly one. */
  dataPath: string;
  /** Where `train|val|test/items.json` and `split_manifest.json` are written. */
  outputDir: string;
  /** `train:val:test` positive integers; default `2:1:7`. */
  ratio?: string;
  /** Default 42. */
  seed?: number;
  /** Reads data_path when it is a benchmark's raw layout rather than one task file. */
  readRaw?: (dataPath: string) => TaskFile;
  /** Write the split's files only when `persist` is called. */
  deferWrite?: boolean;
}

/** Load an existing `train/ val/ test/` folder (reference `split_mode: split_dir`). */
export function loadSplitDir(opts: SplitDirOptions): LoadedSplits {
  const dir = opts.splitDir;
  if (!isDir(dir)) {
    throw new SkillOptError('tasks', 'Split folder does not exist', {
      file: dir,
      fix: 'point split_dir at a folder with train/, val/ and test/ subfolders',
    });
  }
  refuseIdManifest(dir, readManifest(dir));
  const files = {} as Record<SplitName, string>;
  const loaded = {} as Record<SplitName, TaskItem[]>;
  const triggers = { train: [], val: [], test: [] } as Record<SplitName, TaskItem[]>;
  const notices: string[] = [];
  for (const name of splitNames) {
    const sub = findSplitSubdir(dir, name);
    if (!sub && name === 'test' && opts.testEvaluation === false) {
      files.test = join(dir, 'test');
      loaded.test = [];
      continue;
    }
    if (!sub) {
      const alts = aliasesOf(name);
      throw new SkillOptError('tasks', `Split folder has no ${name}/ subfolder`, {
        file: dir,
        fix: `create ${name}/ (or ${alts.map((a) => `${a}/`).join(' or ') || 'an alias'}) holding items.json`,
      });
    }
    const file = findDataFile(sub);
    if (!file) {
      throw new SkillOptError('tasks', `No task file in ${name}/`, {
        file: sub,
        fix: 'put the split in items.json (a JSON array), items.jsonl or a .csv file',
      });
    }
    files[name] = file;
    const unread = unreadDataFiles(sub, file);
    if (unread.length)
      notices.push(
        `${name}/: read ${basename(file)} only (one task file per split); not read: ${unread.join(', ')}`,
      );
    const records = readTaskRecords(file);
    const items = toTaskItems(records, {
      requireAnswers: opts.requireAnswers ?? true,
      allowEmpty: true,
      ...taskOptions(opts),
    });
    loaded[name] = items.filter((i) => i.shouldTrigger === undefined);
    triggers[name] = items.filter((i) => i.shouldTrigger !== undefined);
    notices.push(...(records.notices ?? []));
  }
  const split = finish(dir, files, loaded, readManifest(dir), opts, {
    counts: { train: triggers.train.length, val: triggers.val.length, test: triggers.test.length },
  });
  return {
    ...split,
    notices: [...new Set(notices)],
    triggers: { pool: [...triggers.train, ...triggers.val], sealed: triggers.test },
  };
}

/**
 * Build a deterministic split from one data file (reference `split_mode: ratio`): shuffle every record
 * with Python's `Random(seed)`, cut by largest-remainder counts, write the three `items.json` files and
 * `split_manifest.json`. The written items are the original records, so the Python tool reads the same
 * split; with the same file, ratio and seed both tools produce identical splits.
 */
export function materializeRatioSplit(opts: RatioSplitOptions): LoadedSplits {
  const ratioText = opts.ratio ?? '2:1:7';
  const ratio = parseSplitRatio(ratioText);
  const seed = opts.seed ?? 42;
  const raw = opts.readRaw ? opts.readRaw(opts.dataPath) : readTaskRecords(resolveDataFile(opts.dataPath));
  const source = raw.path;
  const sourceDigest = { file: resolve(source), sha256: recordsDigest(raw.records.map((r) => r.record)) };
  // Validate against the source file first, so errors point at the user's lines, not at generated files.
  const all = toTaskItems(raw, { requireAnswers: opts.requireAnswers ?? true, ...taskOptions(opts) });
  // Trigger queries are the activation track's, all of them: the body split is cut from the rest (and
  // from what a benchmark's reading kept, as the reference does). `fields` is the record as read.
  const items = all.filter((i) => i.shouldTrigger === undefined);
  const triggerPool = all.filter((i) => i.shouldTrigger !== undefined);

  const order = new PyRandom(seed).shuffle(items.map((_, i) => i));
  const [trainN, valN, testN] = computeSplitCounts(items.length, ratio);
  const parts: Record<SplitName, number[]> = {
    train: order.slice(0, trainN),
    val: order.slice(trainN, trainN + valN),
    test: order.slice(trainN + valN, trainN + valN + testN),
  };
  const manifest: SplitManifest = {
    source_data_path: resolve(source),
    split_mode: 'ratio',
    split_ratio: ratioText,
    split_seed: seed,
    counts: { train: trainN, val: valN, test: testN },
    ...(triggerPool.length ? { trigger_queries: triggerPool.length } : {}),
  };
  const files = {} as Record<SplitName, string>;
  const loaded = {} as Record<SplitName, TaskItem[]>;
  for (const name of splitNames) {
    files[name] = join(opts.outputDir, name, 'items.json');
    loaded[name] = parts[name].map((i) => items[i]);
  }
  const persist = (): void => {
    for (const name of splitNames) {
      writeJsonAtomic(
        files[name],
        parts[name].map((i) => items[i].fields),
      );
    }
    writeJsonAtomic(join(opts.outputDir, RUN_FILE.splitManifest), manifest);
  };
  if (!opts.deferWrite) persist();
  const split = finish(opts.outputDir, files, loaded, manifest, opts, {
    ratio: { file: source, ratio: ratioText, counts: [trainN, valN, testN] },
    total: triggerPool.length,
  });
  return {
    ...split,
    notices: raw.notices ?? [],
    triggers: { pool: triggerPool, sealed: [] },
    source: sourceDigest,
    ...(opts.deferWrite ? { persist } : {}),
  };
}

function taskOptions(
  opts: SplitLoadOptions,
): Pick<LoadTasksOptions, 'mapRecord' | 'imageDirs' | 'scorerSeesFields'> {
  return {
    ...(opts.mapRecord ? { mapRecord: opts.mapRecord } : {}),
    ...(opts.scorerSeesFields ? { scorerSeesFields: true } : {}),
    ...(opts.imageDirs ? { imageDirs: opts.imageDirs } : {}),
  };
}

/** Where the rows with `should_trigger` went, so an empty body split says why it is empty. */
interface SplitSource {
  ratio?: { file: string; ratio: string; counts: number[] };
  /** Trigger rows per split folder (split_dir). */
  counts?: Record<SplitName, number>;
  /** Trigger rows of the one task file (ratio). */
  total?: number;
}

function finish(
  dir: string,
  files: Record<SplitName, string>,
  loaded: Record<SplitName, TaskItem[]>,
  manifest: SplitManifest | null,
  opts: SplitLoadOptions,
  source: SplitSource = {},
): LoadedSplits {
  const limit = opts.limit ?? 0;
  if (!Number.isInteger(limit) || limit < 0) {
    throw new SkillOptError('config', `limit must be a whole number ≥ 0, got ${limit}`, {
      key: 'limit',
      fix: 'use 0 for no limit',
    });
  }
  const cut = (items: TaskItem[]): TaskItem[] => (limit > 0 ? items.slice(0, limit) : items);
  const train = cut(loaded.train);
  const val = cut(loaded.val);
  const test = cut(loaded.test);
  const ratioSource = source.ratio;
  // A ratio split's files are generated: point at the user's task file and ratio instead.
  const empty = (name: SplitName, why: string): SkillOptError => {
    const inFolder = source.counts?.[name] ?? 0;
    if (inFolder > 0) {
      return new SkillOptError(
        'tasks',
        `The ${name} split holds only trigger queries (${inFolder} rows with should_trigger, which are the activation track's, never body tasks); ${why}`,
        {
          file: files[name],
          fix: `add body tasks (an input and an expected answer, no should_trigger) to it`,
        },
      );
    }
    const total = source.total ?? 0;
    const triggers = total
      ? ` (${total} rows with should_trigger are the activation track's trigger queries, not body tasks)`
      : '';
    if (ratioSource) {
      const bodyTasks = ratioSource.counts.reduce((a, b) => a + b, 0);
      return new SkillOptError('tasks', `The ${name} split is empty; ${why}`, {
        file: ratioSource.file,
        key: 'env.split_ratio',
        fix: bodyTasks
          ? `the ratio ${ratioSource.ratio} splits this file's ${bodyTasks} body tasks ${ratioSource.counts.join('/')}${triggers}; add tasks or change env.split_ratio`
          : `the file has no body tasks${triggers}; add tasks with an input and an expected answer`,
      });
    }
    return new SkillOptError('tasks', `The ${name} split is empty; ${why}`, {
      file: files[name],
      fix: 'add tasks to it, or use a ratio split of a larger task file',
    });
  };
  if (train.length === 0) throw empty('train', 'training needs tasks to roll out');
  if (val.length === 0) throw empty('val', 'the gate needs a selection split to compare skills');
  if (test.length === 0 && (opts.testEvaluation ?? true)) {
    throw empty('test', 'test evaluation is on (turn it off or add test tasks)');
  }
  checkDisjoint(files, { train, val, test });
  return { train, val, test: new SealedSplit(test), manifest, splitDir: dir, files };
}

/** Ids identify items in caches, resume files and the test leak guard, so they must not repeat across splits. */
function checkDisjoint(files: Record<SplitName, string>, splits: Record<SplitName, TaskItem[]>): void {
  const owner = new Map<string, SplitName>();
  for (const name of splitNames) {
    for (const item of splits[name]) {
      const prev = owner.get(item.id);
      if (prev !== undefined) {
        throw new SkillOptError(
          'tasks',
          `Task id "${item.id}" is in both the ${prev} and the ${name} split`,
          {
            file: files[name],
            fix: 'make ids unique across train, val and test (an item in two splits leaks test data)',
          },
        );
      }
      owner.set(item.id, name);
    }
  }
}
