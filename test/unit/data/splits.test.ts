import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { canonicalSplitName, loadSplitDir, materializeRatioSplit } from '../../../src/engine/data/splits';
import {
  computeSplitCounts,
  defaultSplitOutputDir,
  parseSplitRatio,
} from '../../../src/engine/data/splitRatio';
import { SkillOptError } from '../../../src/engine/errors';

const fixtures = join(__dirname, '..', '..', 'fixtures', 'data');
const ids = (items: readonly { id: string }[]): string[] => items.map((i) => i.id);

describe('splits', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-splits-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const writeRecords = (count: number): string => {
    const path = join(dir, 'all.jsonl');
    const lines = Array.from({ length: count }, (_, i) =>
      JSON.stringify({ id: `r${i}`, question: `Q${i}?`, answer: `${i}` }),
    );
    writeFileSync(path, lines.join('\n') + '\n');
    return path;
  };

  describe('split-dir mode', () => {
    it('loads train/val/test and the manifest', () => {
      const s = loadSplitDir({ splitDir: join(fixtures, 'split_dir') });
      assert.deepEqual(ids(s.train), ['tr0', 'tr1', 'tr2', 'tr3', 'tr4', 'tr5']);
      assert.deepEqual(ids(s.val), ['va0', 'va1', 'va2']);
      assert.equal(s.test.size, 4);
      assert.deepEqual([...s.test.ids], ['te0', 'te1', 'te2', 'te3']);
      assert.deepEqual(ids(s.test.unsealForEvaluation()), ['te0', 'te1', 'te2', 'te3']);
      assert.deepEqual(s.manifest, { benchmark: 'fixture', counts: { train: 6, val: 3, test: 4 } });
      assert.equal(s.files.train, join(fixtures, 'split_dir', 'train', 'items.json'));
    });

    it('keeps test items out of serialisation and out of reach without unsealing', () => {
      const s = loadSplitDir({ splitDir: join(fixtures, 'split_dir') });
      assert.equal(JSON.stringify(s.test), '{"size":4}');
      assert.ok(!Object.keys(s.test).some((k) => k.includes('items')));
      assert.ok(Object.isFrozen(s.test.unsealForEvaluation()));
    });

    it('accepts the reference aliases and other file names (jsonl, csv)', () => {
      const s = loadSplitDir({ splitDir: join(fixtures, 'alias_dir') });
      assert.deepEqual(ids(s.train), ['t0', 't1']);
      assert.deepEqual(ids(s.val), ['v0', 'v1']);
      assert.deepEqual(ids(s.test.unsealForEvaluation()), ['u0', 'u1']);
      assert.equal(s.manifest, null);
    });

    it('reads one task file per split and names the others it does not read', () => {
      for (const name of ['train', 'val', 'test']) {
        mkdirSync(join(dir, name));
        writeFileSync(
          join(dir, name, 'items.json'),
          JSON.stringify([{ id: `${name}0`, question: 'Q', answer: 'A' }]),
        );
      }
      writeFileSync(
        join(dir, 'train', 'items2.json'),
        JSON.stringify([{ id: 'x', question: 'Q', answer: 'A' }]),
      );
      writeFileSync(join(dir, 'train', 'more.csv'), 'id,question,answer\ny,Q,A\n');
      writeFileSync(join(dir, 'train', 'README.md'), 'not a task file');
      const s = loadSplitDir({ splitDir: dir });
      assert.deepEqual(ids(s.train), ['train0']);
      assert.deepEqual(s.notices, [
        'train/: read items.json only (one task file per split); not read: items2.json, more.csv',
      ]);
    });

    it('truncates every split with limit', () => {
      const s = loadSplitDir({ splitDir: join(fixtures, 'split_dir'), limit: 2 });
      assert.deepEqual([ids(s.train), ids(s.val), s.test.size], [['tr0', 'tr1'], ['va0', 'va1'], 2]);
    });

    it('maps split name aliases', () => {
      assert.deepEqual(
        ['valid_seen', 'selection', 'valid_unseen', 'train', 'VAL', 'dev'].map(canonicalSplitName),
        ['val', 'val', 'test', 'train', 'val', undefined],
      );
    });

    it('fails clearly on a missing subfolder, an empty split and ids shared across splits', () => {
      const make = (name: string, records: object[]): void => {
        mkdirSync(join(dir, name), { recursive: true });
        writeFileSync(join(dir, name, 'items.json'), JSON.stringify(records));
      };
      const rec = (id: string): object => ({ id, question: 'q', answer: 'a' });
      make('train', [rec('a')]);
      make('val', [rec('b')]);
      assert.throws(
        () => loadSplitDir({ splitDir: dir }),
        /Split folder has no test\/ subfolder.*valid_unseen/,
      );
      make('test', [rec('a')]);
      assert.throws(
        () => loadSplitDir({ splitDir: dir }),
        /Task id "a" is in both the train and the test split/,
      );
      writeFileSync(join(dir, 'test', 'items.json'), '[]');
      assert.throws(
        () => loadSplitDir({ splitDir: dir }),
        (err: unknown) =>
          SkillOptError.is(err, 'tasks') &&
          err.place.file === join(dir, 'test', 'items.json') &&
          /The test split is empty; test evaluation is on/.test(err.message),
      );
      assert.equal(loadSplitDir({ splitDir: dir, testEvaluation: false }).test.size, 0);
      writeFileSync(join(dir, 'val', 'items.json'), '[]');
      assert.throws(() => loadSplitDir({ splitDir: dir }), /The val split is empty; the gate needs/);
      writeFileSync(join(dir, 'val', 'items.json'), JSON.stringify([rec('b')]));
      rmSync(join(dir, 'test', 'items.json'));
      writeFileSync(join(dir, 'test', 'notes.txt'), 'nothing');
      assert.throws(() => loadSplitDir({ splitDir: dir }), /No task file in test\//);
      rmSync(join(dir, 'test'), { recursive: true });
      assert.equal(loadSplitDir({ splitDir: dir, testEvaluation: false }).test.size, 0);
      assert.throws(() => loadSplitDir({ splitDir: join(dir, 'nope') }), /Split folder does not exist/);
    });

    it('reports an empty train split and a bad limit', () => {
      const make = (name: string, count: number): void => {
        mkdirSync(join(dir, name), { recursive: true });
        const recs = Array.from({ length: count }, (_, i) => ({
          id: `${name}${i}`,
          question: 'q',
          answer: 'a',
        }));
        writeFileSync(join(dir, name, 'items.json'), JSON.stringify(recs));
      };
      make('train', 2);
      make('val', 2);
      make('test', 2);
      assert.throws(() => loadSplitDir({ splitDir: dir, limit: -1 }), /limit must be a whole number/);
      make('train', 0);
      assert.throws(() => loadSplitDir({ splitDir: dir }), /The train split is empty; training needs tasks/);
    });
  });

  describe('ratio mode', () => {
    it('matches Python: shuffle with Random(42), 2:1:7 largest remainder, items written as original records', () => {
      const data = writeRecords(23);
      const out = join(dir, 'out');
      const s = materializeRatioSplit({ dataPath: data, outputDir: out });
      // Golden from CPython 3.11: random.Random(42).shuffle(records); counts (5, 2, 16).
      assert.deepEqual(ids(s.train), ['r16', 'r15', 'r2', 'r14', 'r5']);
      assert.deepEqual(ids(s.val), ['r13', 'r17']);
      assert.deepEqual(ids(s.test.unsealForEvaluation()), [
        'r12',
        'r22',
        'r6',
        'r9',
        'r1',
        'r19',
        'r11',
        'r10',
        'r21',
        'r4',
        'r18',
        'r7',
        'r8',
        'r0',
        'r3',
        'r20',
      ]);
      const manifest = JSON.parse(readFileSync(join(out, 'split_manifest.json'), 'utf8'));
      assert.deepEqual(manifest, {
        source_data_path: resolve(data),
        split_mode: 'ratio',
        split_ratio: '2:1:7',
        split_seed: 42,
        counts: { train: 5, val: 2, test: 16 },
      });
      assert.deepEqual(s.manifest, manifest);
      const written = JSON.parse(readFileSync(join(out, 'val', 'items.json'), 'utf8'));
      assert.deepEqual(written, [
        { id: 'r13', question: 'Q13?', answer: '13' },
        { id: 'r17', question: 'Q17?', answer: '17' },
      ]);
      // The generated folder reads back as a split dir with the same order.
      const again = loadSplitDir({ splitDir: out });
      assert.deepEqual(ids(again.train), ids(s.train));
      assert.deepEqual([...again.test.ids], [...s.test.ids]);
    });

    it('uses the given seed and ratio (seed 7, 1:1:1)', () => {
      const s = materializeRatioSplit({
        dataPath: writeRecords(23),
        outputDir: join(dir, 'o'),
        ratio: '1:1:1',
        seed: 7,
      });
      assert.deepEqual(ids(s.train), ['r5', 'r18', 'r21', 'r15', 'r7', 'r14', 'r22', 'r20']);
      assert.deepEqual(ids(s.val), ['r6', 'r19', 'r13', 'r16', 'r8', 'r0', 'r9', 'r11']);
      assert.deepEqual([...s.test.ids], ['r3', 'r17', 'r2', 'r1', 'r12', 'r4', 'r10']);
    });

    it('accepts a folder holding exactly one data file and refuses split folders', () => {
      const data = join(dir, 'data');
      mkdirSync(data);
      writeFileSync(join(data, 'x.jsonl'), readFileSync(writeRecords(10)));
      const s = materializeRatioSplit({ dataPath: data, outputDir: join(dir, 'o') });
      assert.deepEqual([s.train.length, s.val.length, s.test.size], [2, 1, 7]);
      writeFileSync(join(data, 'y.json'), '[]');
      assert.throws(
        () => materializeRatioSplit({ dataPath: data, outputDir: join(dir, 'o') }),
        /exactly one .*found 2/,
      );
      assert.throws(
        () => materializeRatioSplit({ dataPath: join(fixtures, 'split_dir'), outputDir: join(dir, 'o') }),
        /split_mode: split_dir/,
      );
    });

    it('errors point at the source file, and too few items leave an empty split', () => {
      const bad = join(dir, 'bad.jsonl');
      writeFileSync(bad, '{"id":"1","question":"q","answer":"a"}\n{"id":"2","question":"q"}\n');
      assert.throws(
        () => materializeRatioSplit({ dataPath: bad, outputDir: join(dir, 'o') }),
        (err: unknown) => SkillOptError.is(err, 'tasks') && err.place.file === bad && err.place.line === 2,
      );
      assert.throws(
        () => materializeRatioSplit({ dataPath: writeRecords(2), outputDir: join(dir, 'o') }),
        /The val split is empty/,
      );
    });

    it('computes the reference output folder name', () => {
      assert.equal(
        defaultSplitOutputDir('/runs', 'searchqa', '2:1:7', 42),
        join('/runs', '_generated_splits', 'searchqa_2-1-7_seed42'),
      );
    });
  });

  describe('ratio arithmetic', () => {
    it('parses and validates ratios', () => {
      assert.deepEqual(parseSplitRatio(' 2 : 1 : 7 '), [2, 1, 7]);
      assert.deepEqual(parseSplitRatio('02:+1:1_0'), [2, 1, 10]);
      for (const bad of ['2:1', '2:1:x', '2:0:7', '1.5:1:1', '', '0.6, 0.2, 0.2', '1__0:1:1']) {
        assert.throws(() => parseSplitRatio(bad), { name: 'SkillOptError', reason: 'config' });
      }
    });

    it('matches the reference largest-remainder counts, ties included', () => {
      // Golden from the reference `_compute_split_counts` run under CPython.
      const cases: Array<[number, [number, number, number], [number, number, number]]> = [
        [23, [2, 1, 7], [5, 2, 16]],
        [10, [1, 1, 1], [4, 3, 3]],
        [7, [2, 1, 7], [1, 1, 5]],
        [2000, [2, 1, 7], [400, 200, 1400]],
        [11, [1, 2, 1], [3, 5, 3]],
        [5, [1, 1, 2], [1, 1, 3]],
        [177, [2, 1, 7], [35, 18, 124]],
        [100, [3, 3, 4], [30, 30, 40]],
        [13, [1, 3, 3], [2, 6, 5]],
      ];
      for (const [total, ratio, expected] of cases) {
        assert.deepEqual(computeSplitCounts(total, ratio), expected, `${total} @ ${ratio.join(':')}`);
      }
    });
  });
});
