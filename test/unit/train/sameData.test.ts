import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { taskDataDigest, type TaskDataDigest } from '../../../src/engine/data/digest';
import type { TaskItem } from '../../../src/engine/data/tasks';
import { SkillOptError } from '../../../src/engine/errors';
import { RUN_FILE, RunLayout } from '../../../src/engine/store/layout';
import { checkSameData } from '../../../src/engine/train/sameData';
import { tempDir } from './helpers';

const item = (id: string, answer = 'yes', extra: Record<string, unknown> = {}): TaskItem => ({
  id,
  input: `question ${id}`,
  answers: [answer],
  fields: { id, question: `question ${id}`, answer, ...extra },
});

const digest = (
  train: TaskItem[],
  selection: TaskItem[],
  test: TaskItem[],
  source?: TaskDataDigest['source'],
): TaskDataDigest => taskDataDigest({ train, selection, test }, source);

describe('a run folder belongs to its task data', () => {
  let dir: ReturnType<typeof tempDir>;
  let layout: RunLayout;
  const train = [item('t1'), item('t2')];
  const sel = [item('s1'), item('s2'), item('__proto__')];
  const test = [item('x1')];
  beforeEach(() => {
    dir = tempDir('skillopt-samedata-');
    layout = new RunLayout(dir.path);
  });
  afterEach(() => dir.cleanup());

  const refusal = (now: TaskDataDigest): SkillOptError => {
    try {
      checkSameData(layout, now, true);
    } catch (err) {
      assert.ok(SkillOptError.is(err, 'tasks'), String(err));
      return err;
    }
    assert.fail('the changed data were not refused');
  };

  it('records the data at the start and goes on when they are the same, whatever the key order', () => {
    assert.equal(checkSameData(layout, digest(train, sel, test), false), undefined);
    const reordered = sel.map((i) => ({
      ...i,
      fields: Object.fromEntries(Object.entries(i.fields).reverse()),
    }));
    assert.equal(checkSameData(layout, digest(train, reordered, test), true), undefined);
  });

  it('refuses a changed item, naming the split and the item, and the ways out', () => {
    checkSameData(layout, digest(train, sel, test), false);
    const recorded = readFileSync(layout.file(RUN_FILE.dataDigest), 'utf8');
    const err = refusal(digest(train, [item('s1'), item('s2', 'no'), item('__proto__')], test));
    assert.match(
      err.message,
      /task data changed since this run started: the selection split \(item s2 changed\)/,
    );
    assert.match(err.place.fix ?? '', /--fresh/);
    assert.match(err.place.fix ?? '', /restore the data/);
    assert.equal(readFileSync(layout.file(RUN_FILE.dataDigest), 'utf8'), recorded, 'the record was replaced');
  });

  it('names items added to or removed from a split, and a test split that changed', () => {
    checkSameData(layout, digest(train, sel, test), false);
    const err = refusal(digest([item('t1'), item('t3')], sel, [item('x1', 'other')]));
    assert.match(err.message, /the train split \(item t3 added; item t2 removed\)/);
    assert.match(err.message, /the test split \(item x1 changed\)/);
    assert.match(refusal(digest([...train].reverse(), sel, test)).message, /same items in another order/);
  });

  it('refuses a changed ratio source even where the items the run uses are the same', () => {
    checkSameData(layout, digest(train, sel, test, { file: '/data/tasks.jsonl', sha256: 'a' }), false);
    const err = refusal(digest(train, sel, test, { file: '/data/tasks.jsonl', sha256: 'b' }));
    assert.match(err.message, /the data file the splits are cut from \(\/data\/tasks\.jsonl\)/);
  });

  it('goes on with a one-line notice in a folder written before data were recorded, and records them', () => {
    const notice = checkSameData(layout, digest(train, sel, test), true);
    assert.match(notice ?? '', /no record of the task data it started with/);
    assert.doesNotMatch(notice ?? '', /\n/);
    refusal(digest(train, [item('s1')], test));
  });

  it('refuses a record written by a newer SkillOpt', () => {
    writeFileSync(
      layout.file(RUN_FILE.dataDigest),
      JSON.stringify({ ...digest(train, sel, test), schema_version: 99 }),
    );
    assert.throws(() => checkSameData(layout, digest(train, sel, test), true), /newer SkillOpt/);
  });

  it('refuses a task image whose bytes changed under the same path, naming the item; an older record goes on', () => {
    const page = join(dir.path, 'page1.png');
    writeFileSync(page, Buffer.from([0x89, 0x50, 0x4e, 0x47, 1]));
    const shown = [item('d1', 'yes', { image_path: 'page1.png' }), item('d2')];
    shown[0]!.images = [page];
    checkSameData(layout, digest(train, shown, test), false);
    assert.equal(checkSameData(layout, digest(train, shown, test), true), undefined);
    writeFileSync(page, Buffer.from([0x89, 0x50, 0x4e, 0x47, 2]));
    assert.match(
      refusal(digest(train, shown, test)).message,
      /the selection split \(the images of item d1 changed\)/,
    );
    // A record from before images were hashed has none: nothing to compare, the run goes on.
    const recorded = JSON.parse(readFileSync(layout.file(RUN_FILE.dataDigest), 'utf8')) as {
      splits: Record<string, { images?: unknown }>;
    };
    delete recorded.splits.selection!.images;
    writeFileSync(layout.file(RUN_FILE.dataDigest), JSON.stringify(recorded));
    assert.equal(checkSameData(layout, digest(train, shown, test), true), undefined);
  });
});
