/**
 * A fingerprint of a run's task data: per split, a hash of every item as the data file has it (its
 * record, its id, the content of the files it names), in order; for a ratio split also the whole
 * source file's records. A run folder records it when the run starts, so a resume can tell that the
 * data it would go on with are the ones its finished steps were scored on (train/sameData.ts).
 * File times and places do not count, only contents. The images a task shows the target (DocVQA's
 * pages) are hashed apart (`images`), so a folder recorded before they were still resumes.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { canonicalJson } from '../llm/cache';
import type { TaskItem } from './tasks';

/** The splits as the user names them (the selection split is `val` inside the engine). */
export const DIGEST_SPLITS = ['train', 'selection', 'test'] as const;
export type DigestSplit = (typeof DIGEST_SPLITS)[number];

export interface SplitDigest {
  items: number;
  /** Over the items in order. */
  sha256: string;
  /** [task id, a short hash of that item], to name the items that changed. */
  ids: Array<[string, string]>;
  /** [task id, a short hash of its images' bytes] for the items that show images; absent when none do. */
  images?: Array<[string, string]>;
}

export interface TaskDataDigest {
  splits: Record<DigestSplit, SplitDigest>;
  /** split_mode ratio: the file the splits are cut from, all of its records. */
  source?: { file: string; sha256: string };
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The hash of a data file's records (a ratio split's source). */
export function recordsDigest(records: readonly unknown[]): string {
  return sha256(canonicalJson(records));
}

function itemHash(item: TaskItem): string {
  const files = item.files?.map((f) => ({ name: f.name, digest: f.digest }));
  return sha256(canonicalJson({ id: item.id, fields: item.fields, ...(files ? { files } : {}) })).slice(
    0,
    16,
  );
}

/** The bytes of an item's images, in order (read once per file). */
function imagesHash(paths: readonly string[], seen: Map<string, string>): string {
  const of = (path: string): string => {
    let h = seen.get(path);
    if (h === undefined) {
      h = createHash('sha256').update(readFileSync(path)).digest('hex');
      seen.set(path, h);
    }
    return h;
  };
  return sha256(paths.map(of).join('\n')).slice(0, 16);
}

/** [task id, a short hash of its images' bytes] for the items that show images. */
function imageHashes(items: readonly TaskItem[], seen: Map<string, string>): Array<[string, string]> {
  return items
    .filter((i) => i.images?.length)
    .map((i): [string, string] => [i.id, imagesHash(i.images!, seen)]);
}

/** One hash of the bytes of every image the items show; undefined when none shows one. */
export function imagesDigest(items: readonly TaskItem[]): string | undefined {
  const images = imageHashes(items, new Map());
  return images.length ? sha256(canonicalJson(images)) : undefined;
}

function splitDigest(items: readonly TaskItem[], seen: Map<string, string>): SplitDigest {
  const ids = items.map((i): [string, string] => [i.id, itemHash(i)]);
  const images = imageHashes(items, seen);
  return {
    items: items.length,
    sha256: sha256(canonicalJson(ids)),
    ids,
    ...(images.length ? { images } : {}),
  };
}

export function taskDataDigest(
  splits: Record<DigestSplit, readonly TaskItem[]>,
  source?: TaskDataDigest['source'],
): TaskDataDigest {
  const seen = new Map<string, string>();
  return {
    splits: {
      train: splitDigest(splits.train, seen),
      selection: splitDigest(splits.selection, seen),
      test: splitDigest(splits.test, seen),
    },
    ...(source ? { source } : {}),
  };
}
