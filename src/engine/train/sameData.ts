/**
 * A run folder belongs to the task data it was started with. Going on under edited data would mix
 * two data sets in one run (the baseline scored on the old items, later steps on the new ones), so
 * a resume compares the data's fingerprint (data/digest.ts) with the one recorded at the start and
 * refuses on any difference, naming the split and the items; --force does not apply, as for the
 * config keys that decide which items each step sees (sameRun.ts).
 */
import { DIGEST_SPLITS, type SplitDigest, type TaskDataDigest } from '../data/digest';
import { SkillOptError } from '../errors';
import { writeFileAtomic } from '../store/atomic';
import { RUN_FILE, type RunLayout } from '../store/layout';
import { DATA_DIGEST_VERSION, readDataDigest } from '../store/runSchemas';

const some = (ids: readonly string[]): string =>
  ids.length <= 3 ? ids.join(', ') : `${ids.slice(0, 3).join(', ')} and ${ids.length - 3} more`;

/** How one split's items differ, e.g. `item q7 changed; 2 items added (a, b)`. */
function splitChange(before: SplitDigest, now: SplitDigest): string {
  const old = new Map(before.ids);
  const cur = new Map(now.ids);
  const changed = now.ids.filter(([id, h]) => old.has(id) && old.get(id) !== h).map(([id]) => id);
  const added = now.ids.filter(([id]) => !old.has(id)).map(([id]) => id);
  const removed = before.ids.filter(([id]) => !cur.has(id)).map(([id]) => id);
  const part = (ids: string[], what: string): string[] =>
    ids.length
      ? [ids.length === 1 ? `item ${ids[0]} ${what}` : `${ids.length} items ${what} (${some(ids)})`]
      : [];
  const parts = [...part(changed, 'changed'), ...part(added, 'added'), ...part(removed, 'removed')];
  return parts.length ? parts.join('; ') : 'the same items in another order';
}

/**
 * Checks the task data of a run in `layout` against the digest recorded when it started, and
 * records `now` when the folder has none. Returns a notice for a folder that has a run but no record
 * (written by an older SkillOpt or the Python reference: nothing to compare with).
 */
export function checkSameData(layout: RunLayout, now: TaskDataDigest, resumed: boolean): string | undefined {
  const path = layout.file(RUN_FILE.dataDigest);
  const saved = readDataDigest(path);
  if (!saved) {
    // One line: a split of thousands of items would be tens of thousands of lines pretty-printed.
    writeFileAtomic(path, JSON.stringify({ schema_version: DATA_DIGEST_VERSION, ...now }) + '\n');
    return resumed
      ? 'this run folder has no record of the task data it started with (an older SkillOpt or the Python SkillOpt wrote it): it goes on without checking that the data are the same; from now on a resume checks them'
      : undefined;
  }
  refuseDataChanges(layout, saved, now);
  return undefined;
}

/**
 * What `train --out DIR` would refuse about the task data of the run DIR holds, checked without
 * writing anything: `validate --out DIR`.
 */
export function checkOutFolderData(layout: RunLayout, now: TaskDataDigest): void {
  const saved = readDataDigest(layout.file(RUN_FILE.dataDigest));
  if (saved) refuseDataChanges(layout, saved, now);
}

function refuseDataChanges(
  layout: RunLayout,
  saved: NonNullable<ReturnType<typeof readDataDigest>>,
  now: TaskDataDigest,
): void {
  const changes = DIGEST_SPLITS.filter((s) => saved.splits[s].sha256 !== now.splits[s].sha256).map(
    (s) => `the ${s} split (${splitChange(saved.splits[s], now.splits[s])})`,
  );
  // A digest recorded before images were hashed has none to compare: those runs go on unchecked.
  for (const s of DIGEST_SPLITS) {
    const before = saved.splits[s].images;
    const after = now.splits[s].images;
    if (!before || !after || saved.splits[s].sha256 !== now.splits[s].sha256) continue;
    const old = new Map(before);
    // Same items (the split's hash is equal), so the same ids show images.
    const ids = after.filter(([id, h]) => old.get(id) !== h).map(([id]) => id);
    if (ids.length)
      changes.push(
        `the ${s} split (${ids.length === 1 ? `the images of item ${ids[0]} changed` : `the images of ${ids.length} items changed (${some(ids)})`})`,
      );
  }
  if (!changes.length && saved.source && now.source && saved.source.sha256 !== now.source.sha256) {
    changes.push(`the data file the splits are cut from (${now.source.file}), beyond the items the run uses`);
  }
  if (!changes.length) return;
  throw new SkillOptError('tasks', `the task data changed since this run started: ${changes.join('; ')}`, {
    file: layout.root,
    fix: 'restore the data the run started with and resume, train into another --out folder, or start this folder afresh with --fresh (--force cannot go on with other data: the finished steps were scored on the old)',
  });
}
