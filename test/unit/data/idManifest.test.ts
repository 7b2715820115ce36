import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSplitDir } from '../../../src/engine/data/splits';
import { SkillOptError } from '../../../src/engine/errors';

/**
 * The reference repository ships `data/<benchmark>_id_split/` folders that look like split folders
 * but hold only ids: pointing env.split_dir at one is refused once, saying what it is and what to
 * do, instead of "task has no input" for its first item (or an empty train split when every item
 * is skipped, as LiveMathematicianBench's loader skips items without a question).
 */
describe('data: the reference’s ID manifests as env.split_dir', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'skillopt-id-manifest-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A folder shaped like the reference's release manifests (split_manifest.json + train|val|test/items.json). */
  function manifestFolder(manifest: Record<string, unknown>, item: Record<string, unknown>): string {
    const root = join(dir, 'split');
    for (const split of ['train', 'val', 'test']) {
      mkdirSync(join(root, split), { recursive: true });
      writeFileSync(join(root, split, 'items.json'), JSON.stringify([{ ...item, id: `${split}-1` }]));
    }
    writeFileSync(join(root, 'split_manifest.json'), JSON.stringify(manifest));
    return root;
  }

  it('refuses an id_split manifest naming the benchmark, its fields and where the items come from', () => {
    const root = manifestFolder(
      {
        benchmark: 'SearchQA',
        manifest_type: 'id_split',
        source_url: 'https://huggingface.co/datasets/lucadiliello/searchqa',
        item_fields: ['id'],
        counts: { train: 1, val: 1, test: 1 },
      },
      {},
    );
    assert.throws(
      () => loadSplitDir({ splitDir: root }),
      (e: unknown) =>
        SkillOptError.is(e, 'tasks') &&
        e.message.startsWith(`${root}: this is the reference's SearchQA ID manifest`) &&
        e.message.includes('lookup fields only (id), no question or answer') &&
        e.message.includes(
          'Fix: materialise the items from https://huggingface.co/datasets/lucadiliello/searchqa',
        ) &&
        e.message.includes('delete its split_manifest.json'),
    );
  });

  it('loads a materialised folder, whose manifest does not call itself an id_split', () => {
    const root = manifestFolder(
      { source_dataset: 'lucadiliello/searchqa', item_fields: ['id', 'question', 'answers'] },
      { question: 'Q?', answer: 'A' },
    );
    const s = loadSplitDir({ splitDir: root });
    assert.deepEqual(
      s.train.map((i) => i.id),
      ['train-1'],
    );
  });
});
