import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';

export const FIXTURES = path.resolve(__dirname, '../../fixtures/config');
export const PYTHON_RUN_CONFIG = path.resolve(__dirname, '../../fixtures/skillopt-python-run/config.json');

/** A temp directory for one test, removed by the returned cleanup. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-config-'));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export function write(dir: string, name: string, text: string): string {
  const file = path.join(dir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

/** 1-based line of the first line containing `needle`. */
export function lineOf(text: string, needle: string): number {
  const index = text.split('\n').findIndex((l) => l.includes(needle));
  assert.ok(index >= 0, `"${needle}" not in text`);
  return index + 1;
}

export interface ExpectedError {
  file: string;
  line?: number;
  key?: string;
  includes?: string[];
}

/** Run fn, expect a config SkillOptError whose message names file[:line] (key) and a fix. */
export function expectConfigError(fn: () => unknown, expected: ExpectedError): SkillOptError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof SkillOptError, `expected SkillOptError, got ${String(caught)}`);
  assert.equal(caught.reason, 'config');
  const where = expected.line === undefined ? expected.file : `${expected.file}:${expected.line}`;
  assert.ok(caught.message.startsWith(where), `message should start with ${where}: ${caught.message}`);
  if (expected.line === undefined) assert.equal(caught.place.line, undefined, caught.message);
  if (expected.key)
    assert.ok(caught.message.includes(`(${expected.key})`), `key ${expected.key}: ${caught.message}`);
  assert.ok(caught.message.includes('. Fix: '), `no fix: ${caught.message}`);
  for (const part of expected.includes ?? []) {
    assert.ok(caught.message.includes(part), `"${part}" missing from: ${caught.message}`);
  }
  return caught;
}
