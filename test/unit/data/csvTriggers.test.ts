import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTriggerFile } from '../../../src/engine/activation/queries';
import { materializeRatioSplit } from '../../../src/engine/data/splits';
import { loadTasks } from '../../../src/engine/data/tasks';
import { evalTempDir, refused } from './evalHelpers';

/**
 * `should_trigger` in a text-typed file (CSV, TSV): every row has every column, so a body task has an
 * empty cell and a trigger query says true or false in text. JSON, JSONL and YAML keep their booleans.
 */
describe('should_trigger in CSV and TSV task files', () => {
  const tmp = evalTempDir();
  const csv = [
    'id,question,answer,should_trigger',
    'b1,What is 2+2?,4,',
    'b2,What is 3+3?,6,',
    't1,Format this date for the directory,,true',
    't2,Write a haiku,,FALSE',
    't3,Spell the name for the directory,, Yes ',
    't4,Explain recursion,,0',
    'b3,What is 4+4?,8,',
  ].join('\n');

  it('reads body tasks (empty cell) and trigger queries (true/false, yes/no, 1/0, any case) from one file', () => {
    const items = loadTasks(tmp.write('mixed.csv', csv));
    const flags = Object.fromEntries(items.map((i) => [i.id, i.shouldTrigger]));
    assert.deepEqual(flags, {
      b1: undefined,
      b2: undefined,
      t1: true,
      t2: false,
      t3: true,
      t4: false,
      b3: undefined,
    });
    // A trigger query needs no expected answer; a body row keeps no trace of the empty cell.
    assert.deepEqual(items[0].fields, { id: 'b1', question: 'What is 2+2?', answer: '4' });
    const tsv = loadTasks(tmp.write('mixed.tsv', csv.replaceAll(',', '\t')));
    assert.deepEqual(
      tsv.map((i) => i.shouldTrigger),
      items.map((i) => i.shouldTrigger),
    );
  });

  it('refuses any other text, naming the file, the row and the value', () => {
    const path = tmp.write('odd.csv', csv.replace('t2,Write a haiku,,FALSE', 't2,Write a haiku,,maybe'));
    refused(
      () => loadTasks(path),
      { file: /odd\.csv$/, line: 5, key: 'should_trigger' },
      /should_trigger is "maybe", not true or false/,
    );
  });

  it('writes a ratio split from the CSV that reads back (body rows without the empty cell)', () => {
    const rows = Array.from({ length: 10 }, (_, i) => `b${i},Q${i},${i},`);
    const path = tmp.write(
      'ratio.csv',
      [csv.split('\n')[0], ...rows, 't1,Format this date,,true'].join('\n'),
    );
    const split = materializeRatioSplit({
      dataPath: path,
      outputDir: join(tmp.path, 'split'),
      ratio: '4:3:3',
    });
    assert.equal(split.triggers?.pool.length, 1);
    for (const file of Object.values(split.files)) {
      assert.ok(!readFileSync(file, 'utf8').includes('should_trigger'));
      assert.ok(loadTasks(file).every((i) => i.shouldTrigger === undefined));
    }
  });

  it('reads a CSV trigger file (activation.trigger_file), refusing a row whose cell is empty', () => {
    const path = tmp.write(
      'triggers.csv',
      'query,should_trigger\nformat the date,true\nwrite a poem,false\n',
    );
    assert.deepEqual(readTriggerFile(path), [
      { id: 'q1', query: 'format the date', shouldTrigger: true },
      { id: 'q2', query: 'write a poem', shouldTrigger: false },
    ]);
    const gap = tmp.write('gap.csv', 'query,should_trigger\nformat the date,true\nwrite a poem,\n');
    refused(() => readTriggerFile(gap), { line: 3 }, /a trigger query has no should_trigger/);
  });

  it('keeps JSON strict: the text "true" is refused, in task rows and in trigger files', () => {
    const rows = tmp.write('t.jsonl', JSON.stringify({ id: 'a', query: 'q', should_trigger: 'true' }) + '\n');
    refused(() => loadTasks(rows), { line: 1 }, /Task "a" has should_trigger "true"/);
    const file = tmp.write('trig.json', JSON.stringify([{ query: 'q', should_trigger: 'true' }]));
    refused(() => readTriggerFile(file), {}, /should_trigger "true", not true or false/);
  });

  it('keeps the flag of an eval-shaped row (skill-creator expectations): a trigger query, not a body task', () => {
    const row = { id: 'a', prompt: 'make a pdf', expectations: ['a pdf is written'] };
    const [item] = loadTasks(tmp.write('e.json', JSON.stringify([{ ...row, should_trigger: true }])));
    const odd = tmp.write('odd.json', JSON.stringify([{ ...row, should_trigger: 'yes' }]));
    refused(() => loadTasks(odd), {}, /Task "a" has should_trigger "yes"/);
    assert.equal(item.shouldTrigger, true);
  });
});

describe("skill-creator's fields as CSV columns", () => {
  const tmp = evalTempDir();

  it('reads expectations and files as a JSON array or one entry; an empty cell is a row without them', () => {
    tmp.write('files/a.txt', 'alpha');
    const path = tmp.write(
      'evals.csv',
      [
        'id,prompt,expected_output,expectations,files',
        '1,Sum a,$3,"[""Adds both lines"", ""Says $3""]",files/a.txt',
        '2,Sum b,$5,Says $5,"[""files/a.txt""]"',
        '3,Sum c,$7,,',
      ].join('\n'),
    );
    const items = loadTasks(path);
    assert.deepEqual(
      items.map((i) => (i.assertions ?? []).map((a) => (a.kind === 'judge' ? a.rubric : a.label))),
      [['Adds both lines', 'Says $3'], ['Says $5'], ['The output achieves what this describes: $7']],
    );
    assert.deepEqual(
      items.map((i) => i.files?.map((f) => f.text)),
      [['alpha'], ['alpha'], undefined],
    );
  });
});
