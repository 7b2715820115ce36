/**
 * The reference benchmarks' data files load as the reference's own loaders read them. Expected values
 * come from the reference's Python loaders (test/fixtures/benchmarks, each file names its source).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { liveMathItem } from '../../../src/engine/data/benchmarkRecords';
import { benchmarkFor } from '../../../src/engine/data/benchmarks';
import { withShuffledChoices } from '../../../src/engine/data/choiceShuffle';
import { buildTrainBatch, planTrainEpoch } from '../../../src/engine/data/plan';
import { materializeRatioSplit } from '../../../src/engine/data/splits';
import { readTaskRecords } from '../../../src/engine/data/taskFiles';
import { toTaskItems, type TaskItem } from '../../../src/engine/data/tasks';
import { SkillOptError } from '../../../src/engine/errors';

const fixtures = join(__dirname, '..', '..', 'fixtures', 'benchmarks');
const probes = <T>(name: string): T => JSON.parse(readFileSync(join(fixtures, name), 'utf8')) as T;
const bench = (name: string, extra: Record<string, unknown> = {}) => benchmarkFor({ name, ...extra })!;

type Choice = { label: string; text: string };

describe('reference benchmark data', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-bench-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const write = (rel: string, text: string | Buffer): string => {
    const path = join(dir, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  };

  it('DocVQA: Python-list answers, document_path in the question, topic as type, image found', () => {
    const { csv, cases } = probes<{
      csv: string;
      cases: { id: string; question: string; answers: string[]; image_path: string; task_type: string }[];
    }>('docvqa-loader.json');
    for (const c of cases) write(c.image_path, Buffer.from('png'));
    const file = write('split/train/data.csv', csv);
    const items = toTaskItems(readTaskRecords(file), {
      mapRecord: bench('docvqa').mapRecord,
      imageDirs: [dir],
    });
    assert.equal(items.length, cases.length);
    items.forEach((item, i) => {
      const want = cases[i];
      assert.equal(item.id, want.id);
      assert.equal(item.input, want.question);
      assert.deepEqual(item.answers, want.answers, `answers of ${want.id}`);
      assert.equal(item.taskType, want.task_type);
      assert.deepEqual(item.images, [join(dir, want.image_path)]);
      assert.deepEqual(
        item.fields.answer,
        readTaskRecords(file).records[i].record.answer,
        'fields keep the row',
      );
    });
  });

  it('DocVQA: a missing or unsupported image stops loading with the task and where it looked', () => {
    const file = write('t.csv', 'questionId,question,answer,image_path\n7,Q?,"[\'a\']",pages/p7.png\n');
    assert.throws(
      () => toTaskItems(readTaskRecords(file), { mapRecord: bench('docvqa').mapRecord, imageDirs: [] }),
      (err: unknown) =>
        SkillOptError.is(err, 'tasks') &&
        /Task "7" names image "pages\/p7.png", which does not exist/.test(err.message) &&
        err.place.line === 2 &&
        err.place.fix!.includes(join(dir, 'pages', 'p7.png')),
    );
    write('pages/p7.png', 'x'.repeat(10));
    write('u.csv', 'questionId,question,answer,image_path\n8,Q?,a,scan.tiff\n');
    write('scan.tiff', 'x');
    assert.throws(
      () => toTaskItems(readTaskRecords(join(dir, 'u.csv')), { mapRecord: bench('docvqa').mapRecord }),
      /not PNG, JPEG, GIF or WebP/,
    );
  });

  it('OfficeQA: ground_truth before answer, difficulty as type, list cells', () => {
    const { csv, loaded } = probes<{ csv: string; loaded: Record<string, unknown>[] }>('officeqa.json');
    const file = write('o.csv', csv);
    const items = toTaskItems(readTaskRecords(file), { mapRecord: bench('officeqa').mapRecord });
    items.forEach((item, i) => {
      assert.equal(item.id, loaded[i].id);
      assert.equal(item.input, loaded[i].question);
      assert.deepEqual(item.answers, loaded[i].answers);
      assert.equal(item.taskType, loaded[i].task_type);
    });
    const mapped = bench('officeqa').mapRecord!(readTaskRecords(file).records[1].record, 1)!;
    assert.deepEqual(mapped.source_files, loaded[1].source_files);
    assert.deepEqual(mapped.source_docs, loaded[1].source_docs);
  });

  it('LiveMathematicianBench: monthly (mcq) and split (correct_choice) items normalise as the reference', () => {
    const { monthly, normalized } = probes<{
      monthly: Record<string, unknown>[];
      normalized: Record<string, unknown>[];
    }>('livemath.json');
    const ours = monthly.map((m, i) => liveMathItem(m, i)).filter((x) => x !== undefined);
    assert.deepEqual(ours, normalized);
    // A split file holds the normalised items; reading them again changes nothing.
    assert.deepEqual(
      normalized.map((n, i) => liveMathItem(n, i)),
      normalized,
    );
  });

  it('LiveMathematicianBench: the per-seed choice shuffle is bit-exact with the reference', () => {
    const { normalized, shuffles } = probes<{
      normalized: Record<string, unknown>[];
      shuffles: { id: string; seed: number; choices: Choice[]; correct_choice: Choice }[];
    }>('livemath.json');
    const file = write('split.json', JSON.stringify(normalized));
    const items = new Map(
      toTaskItems(readTaskRecords(file), { mapRecord: bench('livemathematicianbench').mapRecord }).map(
        (i): [string, TaskItem] => [i.id, { ...i, shuffleChoices: true }],
      ),
    );
    for (const s of shuffles) {
      const got = withShuffledChoices(items.get(s.id)!, s.seed);
      assert.deepEqual(
        got.choices,
        s.choices.map((c) => c.text),
        `${s.id} seed ${s.seed}`,
      );
      assert.deepEqual(
        got.choiceLabels,
        s.choices.map((c) => c.label),
      );
      assert.deepEqual(got.answers, [s.correct_choice.label], `${s.id} seed ${s.seed}`);
    }
    const unmarked = { ...items.get(shuffles[0].id)!, shuffleChoices: false };
    assert.equal(withShuffledChoices(unmarked, 42), unmarked, 'items not marked keep their order');
  });

  it('LiveMathematicianBench train batches and slow-update samples draw choices as the reference plans them', () => {
    type Drawn = { id: string; choices: string[]; correct: string };
    const { normalized, plan, slow_batch } = probes<{
      normalized: Record<string, unknown>[];
      plan: {
        epoch: number;
        batch_size: number;
        steps: number;
        accumulation: number;
        seed: number;
        items: Drawn[];
      }[];
      slow_batch: { seed: number; size: number; items: Drawn[] };
    }>('livemath.json');
    const file = write('train.json', JSON.stringify(normalized));
    const train = toTaskItems(readTaskRecords(file), {
      mapRecord: bench('livemathematicianbench').mapRecord,
    }).map((i) => ({ ...i, shuffleChoices: true }));
    const drawn = (i: TaskItem): Drawn => ({ id: i.id, choices: i.choices!, correct: i.answers[0] });
    for (const epoch of [...new Set(plan.map((p) => p.epoch))]) {
      const want = plan.filter((p) => p.epoch === epoch);
      const got = planTrainEpoch(train, {
        seed: 42,
        epoch,
        batchSize: want[0].batch_size,
        accumulation: want[0].accumulation,
        stepsPerEpoch: want[0].steps,
      });
      assert.deepEqual(
        got.map((b) => ({ seed: b.seed, items: b.items.map(drawn) })),
        want.map((b) => ({ seed: b.seed, items: b.items })),
        `epoch ${epoch}`,
      );
    }
    const sample = buildTrainBatch(train, train.length, slow_batch.seed)
      .map((i) => withShuffledChoices(i, slow_batch.seed))
      .slice(0, slow_batch.size);
    assert.deepEqual(sample.map(drawn), slow_batch.items);
  });

  it('LiveMathematicianBench ratio mode reads a folder of monthly files and writes normalised items', () => {
    const { monthly, normalized } = probes<{
      monthly: Record<string, unknown>[];
      normalized: Record<string, unknown>[];
    }>('livemath.json');
    write('raw/202511/qa_202511_final.json', JSON.stringify(monthly.slice(0, 3)));
    write('raw/qa_202512_final.json', JSON.stringify(monthly.slice(3)));
    write('raw/notes.json', '[]');
    const b = bench('livemathematicianbench');
    const splits = materializeRatioSplit({
      dataPath: join(dir, 'raw'),
      outputDir: join(dir, 'out'),
      ratio: '1:1:1',
      seed: 42,
      mapRecord: b.mapRecord!,
      readRaw: b.readRaw!,
    });
    const total = splits.train.length + splits.val.length + splits.test.size;
    assert.equal(
      total,
      normalized.length,
      'the item without a question is dropped, as the reference drops it',
    );
    const written = JSON.parse(readFileSync(join(dir, 'out', 'train', 'items.json'), 'utf8')) as unknown[];
    for (const w of written) assert.ok(normalized.some((n) => JSON.stringify(n) === JSON.stringify(w)));
  });

  it('refuses benchmarks that need a simulator or code execution, pointing at agent targets', () => {
    for (const name of ['alfworld', 'spreadsheetbench', 'SWE-bench', 'swe_bench']) {
      assert.throws(
        () => benchmarkFor({ name }),
        (err: unknown) =>
          SkillOptError.is(err, 'config') &&
          err.place.key === 'env.name' &&
          /does not run/.test(err.message) &&
          /agent target/.test(err.place.fix ?? ''),
        name,
      );
    }
    assert.equal(benchmarkFor({ name: 'my-tasks' }), undefined);
    assert.equal(bench('docvqa').scorer, 'anls');
    assert.equal(bench('officeqa').scorer, 'officeqa');
    assert.equal(bench('livemathematicianbench').scorer, 'choice');
    assert.equal(bench('livemathematicianbench', { shuffle_choices: false }).shuffleChoices, false);
  });
});
