import assert from 'node:assert/strict';
import {
  extractJson,
  extractJsonArray,
  lineCol,
  locateJsonError,
  repairJson,
} from '../../../src/engine/llm/json';

describe('llm/json extractJson', () => {
  it('prefers the fenced json block over an object in the prose', () => {
    const r = extractJson('Example: {"a": 0}\n```json\n{"a": 1}\n```');
    assert.deepEqual(r, { ok: true, value: { a: 1 }, repaired: false });
  });

  it('accepts an upper-case fence label', () => {
    assert.deepEqual(extractJson('```JSON\n{"a": 1}\n```'), { ok: true, value: { a: 1 }, repaired: false });
  });

  it('refuses two fenced json blocks', () => {
    const r = extractJson('```json\n{"a": 1}\n```\nor\n```json\n{"a": 2}\n```');
    assert.deepEqual(r, { ok: false, error: '2 fenced JSON blocks; expected exactly one' });
  });

  it('finds the unique object in prose, with braces and escaped quotes inside strings', () => {
    assert.deepEqual(extractJson('Sure! {"a": {"b": "}"}} done'), {
      ok: true,
      value: { a: { b: '}' } },
      repaired: false,
    });
    assert.deepEqual(extractJson('{"a": "quote \\" and } brace"}'), {
      ok: true,
      value: { a: 'quote " and } brace' },
      repaired: false,
    });
  });

  it('is not fooled by a fence inside a JSON string value', () => {
    const reply = '```json\n{"new_skill": "use ```python``` blocks\\n```json\\n{}\\n```"}\n```';
    assert.deepEqual(extractJson(reply), {
      ok: true,
      value: { new_skill: 'use ```python``` blocks\n```json\n{}\n```' },
      repaired: false,
    });
  });

  it('refuses two top-level objects and reports none found', () => {
    assert.deepEqual(extractJson('{"a": 1} {"b": 2}'), {
      ok: false,
      error: '2 top-level JSON objects; expected exactly one',
    });
    assert.deepEqual(extractJson('no JSON, only {task_file} and {prompt}'), {
      ok: false,
      error: 'no JSON object found',
    });
    assert.deepEqual(extractJson(''), { ok: false, error: 'no JSON object found' });
  });

  it('reports a cut-off reply with its position', () => {
    assert.deepEqual(extractJson('text {"a": "abc'), {
      ok: false,
      error: 'unterminated JSON object starting at line 1 col 6 (the reply may have been cut off)',
    });
    assert.deepEqual(extractJson('{"a": 1} then {"b": '), {
      ok: false,
      error: '2 top-level JSON objects, one of them unterminated; expected exactly one',
    });
  });

  it('repairs trailing commas and typographic quotes around keys', () => {
    assert.deepEqual(extractJson('{"a": 1, "b": [1, 2,],}'), {
      ok: true,
      value: { a: 1, b: [1, 2] },
      repaired: true,
    });
    assert.deepEqual(extractJson('{\u201ca\u201d: 1, \u201cb c\u201d : [1]}'), {
      ok: true,
      value: { a: 1, 'b c': [1] },
      repaired: true,
    });
  });

  it('leaves typographic quotes inside string values alone', () => {
    assert.deepEqual(extractJson('{"a": "he said \u201chi\u201d: ok"}'), {
      ok: true,
      value: { a: 'he said \u201chi\u201d: ok' },
      repaired: false,
    });
  });

  it('names line and column of a syntax error in the reply', () => {
    assert.deepEqual(extractJson('Here:\n{\n  "a": 1\n  "b": 2\n}'), {
      ok: false,
      error:
        'invalid JSON: expected "," or "}" after a property value but found character "\\"" at line 4 col 3',
    });
    assert.deepEqual(extractJson('{"a": "line1\nline2"}'), {
      ok: false,
      error:
        'invalid JSON: raw control character (such as a line break) inside a string; escape it as \\n at line 1 col 13',
    });
    assert.deepEqual(extractJson('{"a": tru}'), {
      ok: false,
      error: 'invalid JSON: expected a value but found character "t" at line 1 col 7',
    });
  });

  it('stays fast on pathological input (linear scan)', () => {
    const r = extractJson('{"a":'.repeat(200_000));
    assert.deepEqual(r, {
      ok: false,
      error: 'unterminated JSON object starting at line 1 col 1 (the reply may have been cut off)',
    });
    const long = `{"k": "${'\u201c'.repeat(500_000)}"}`;
    const ok = extractJson(long);
    assert.equal(ok.ok && (ok.value.k as string).length, 500_000);
  });
});

describe('llm/json extractJsonArray', () => {
  it('finds the unique top-level array', () => {
    assert.deepEqual(extractJsonArray('Indices: [2, 0, 1]'), { ok: true, value: [2, 0, 1], repaired: false });
    assert.deepEqual(extractJsonArray('[note] ["x"]'), { ok: true, value: ['x'], repaired: false });
  });

  it('refuses ambiguity and ignores arrays nested in objects', () => {
    assert.deepEqual(extractJsonArray('[1] and [2]'), {
      ok: false,
      error: '2 top-level JSON arrays; expected exactly one',
    });
    assert.deepEqual(extractJsonArray('{"a": [1]}'), { ok: false, error: 'no JSON array found' });
  });

  it('repairs a trailing comma', () => {
    assert.deepEqual(extractJsonArray('```json\n[{"a": 1},]\n```'), {
      ok: true,
      value: [{ a: 1 }],
      repaired: true,
    });
  });
});

describe('llm/json helpers', () => {
  it('repairJson never changes valid JSON', () => {
    const valid = '{"a": "x, }", "b": [1, "\u201cq\u201d: 2"], "c": {"d": "\\",]"}}';
    assert.equal(repairJson(valid), valid);
  });

  it('locateJsonError finds the first problem or returns null', () => {
    assert.equal(locateJsonError('{"a": [1, 2]}'), null);
    assert.deepEqual(locateJsonError('{"a": [1, 2,]}'), { pos: 12, problem: 'trailing comma before "]"' });
    assert.deepEqual(locateJsonError('{"a": 1,}'), { pos: 8, problem: 'trailing comma before "}"' });
    assert.deepEqual(locateJsonError('{"a": "\\q"}'), { pos: 7, problem: 'invalid escape \\q in string' });
  });

  it('lineCol is 1-based', () => {
    assert.deepEqual(lineCol('ab\ncd', 0), { line: 1, col: 1 });
    assert.deepEqual(lineCol('ab\ncd', 4), { line: 2, col: 2 });
  });
});
