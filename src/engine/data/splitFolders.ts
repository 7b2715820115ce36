/** The three splits' names and where their files are: split folders, data files, the manifest. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SkillOptError } from '../errors';
import { fileKind } from '../regularFile';
import { RUN_FILE } from '../store/layout';

export type SplitName = 'train' | 'val' | 'test';
export const splitNames: readonly SplitName[] = ['train', 'val', 'test'];

/** Names the reference trainer and its split folders use for the same three splits. */
const splitAliases: Record<string, SplitName> = {
  train: 'train',
  val: 'val',
  valid_seen: 'val',
  selection: 'val',
  test: 'test',
  valid_unseen: 'test',
};

/** Map a split name as the reference spells it (`valid_seen`, `selection`, `valid_unseen`) to ours. */
export function canonicalSplitName(name: string): SplitName | undefined {
  return splitAliases[name.trim().toLowerCase()];
}

/** `split_manifest.json`: how a generated split was cut (informational). */
export type SplitManifest = Record<string, unknown>;

const dataExtensions = ['.json', '.jsonl', '.csv', '.yaml', '.yml'];

/** The other folder names the reference accepts for a split (`valid_seen`, `selection` for val, …). */
export function aliasesOf(name: SplitName): string[] {
  return Object.keys(splitAliases).filter((k) => splitAliases[k] === name && k !== name);
}

export function findSplitSubdir(dir: string, name: SplitName): string | undefined {
  if (isDir(join(dir, name))) return join(dir, name);
  for (const alias of aliasesOf(name)) if (isDir(join(dir, alias))) return join(dir, alias);
  return undefined;
}

/** `items.json`, then `items.jsonl`, then the first data file by extension order and name. */
export function findDataFile(dir: string): string | undefined {
  for (const name of ['items.json', 'items.jsonl']) if (isFile(join(dir, name))) return join(dir, name);
  const names = readdirSync(dir).sort();
  for (const ext of dataExtensions) {
    const hit = names.find((n) => n.toLowerCase().endsWith(ext) && isFile(join(dir, n)));
    if (hit) return join(dir, hit);
  }
  return undefined;
}

/** The split folder's other task files, which are not read (one file per split, as the reference reads one). */
export function unreadDataFiles(dir: string, read: string): string[] {
  return readdirSync(dir)
    .sort()
    .filter((n) => join(dir, n) !== read && dataExtensions.some((e) => n.toLowerCase().endsWith(e)))
    .filter((n) => isFile(join(dir, n)));
}

export function resolveDataFile(dataPath: string): string {
  if (isFile(dataPath)) return dataPath;
  const st = statSync(dataPath, { throwIfNoEntry: false });
  if (st && !st.isDirectory()) {
    throw new SkillOptError('tasks', `Data file is ${fileKind(st)}, not a regular file`, {
      file: dataPath,
      fix: 'point data_path at one .jsonl, .json, .csv or .yaml file',
    });
  }
  if (!st) {
    throw new SkillOptError('tasks', 'Data file does not exist', {
      file: dataPath,
      fix: 'point data_path at one .jsonl, .json, .csv or .yaml file',
    });
  }
  if (splitNames.some((n) => isDir(join(dataPath, n)))) {
    throw new SkillOptError('tasks', 'data_path is a split folder (it has train/, val/ or test/)', {
      file: dataPath,
      fix: 'use split_mode: split_dir with split_dir set to this folder',
    });
  }
  const candidates = readdirSync(dataPath)
    .sort()
    .filter((n) => dataExtensions.some((e) => n.toLowerCase().endsWith(e)) && isFile(join(dataPath, n)));
  if (candidates.length !== 1) {
    throw new SkillOptError(
      'tasks',
      `A data folder must hold exactly one .json, .jsonl, .csv or .yaml file, found ${candidates.length}`,
      { file: dataPath, fix: 'point data_path at the file itself' },
    );
  }
  return join(dataPath, candidates[0]);
}

export function readManifest(dir: string): SplitManifest | null {
  const path = join(dir, RUN_FILE.splitManifest);
  if (!existsSync(path)) return null;
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new SkillOptError(
      'tasks',
      `split_manifest.json is not valid JSON: ${(err as Error).message}`,
      { file: path, fix: 'repair or delete the manifest (it is informational)' },
      { cause: err },
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SkillOptError('tasks', 'split_manifest.json must hold a JSON object', {
      file: path,
      fix: 'repair or delete the manifest (it is informational)',
    });
  }
  return value as SplitManifest;
}

export function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The reference repository's `data/<benchmark>_id_split/` folders are lookup manifests: their items
 * hold ids (and source hints), no question or answer, so every item would be refused or skipped one
 * by one. Said once, with what to do, when the manifest names itself so.
 */
export function refuseIdManifest(dir: string, manifest: SplitManifest | null): void {
  if (manifest?.manifest_type !== 'id_split') return;
  const bench = typeof manifest.benchmark === 'string' ? `${manifest.benchmark} ` : '';
  const fields = Array.isArray(manifest.item_fields) ? manifest.item_fields.join(', ') : 'ids';
  const source = typeof manifest.source_url === 'string' ? ` from ${manifest.source_url}` : '';
  throw new SkillOptError(
    'tasks',
    `this is the reference's ${bench}ID manifest: its items hold lookup fields only (${fields}), no question or answer`,
    {
      file: dir,
      fix: `materialise the items${source} first (the reference's data/README.md says how each id maps to its example) into a folder with train/, val/ and test/ files, and point env.split_dir at that folder (a folder that already holds the materialised items: delete its split_manifest.json)`,
    },
  );
}
