import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { EVAL_FILE, RUN_DIR, RUN_FILE, STEP_DIR, STEP_FILE } from '../../../src/engine/store/layout';
import { STAGE_NAMES } from '../../../src/protocol/vocabulary';

const src = join(__dirname, '..', '..', '..', 'src');
const LAYOUT = ['engine', 'store', 'layout.ts'].join('/');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** Run-folder names that eval files also use as field names. */
const DATA_FIELDS: ReadonlySet<string> = new Set(['skills']);

/**
 * A run-folder name as a whole string (`'results.jsonl'`, `'selection_eval'`) or as a segment of a
 * path built in a template (`${dir}/steps`). Folder names that are also stage names (`rollout`,
 * `slow_update`) are the stages' words elsewhere, so they are left to RunLayout's typed methods.
 */
function spelled(text: string, name: string): boolean {
  const n = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // A folder name that is also a data field's (an eval record's `skills`) counts only in a path.
  const quoted = DATA_FIELDS.has(name) ? '' : `'${n}'|`;
  // Code quotes with ' (Prettier); a "name" in double quotes is inside a message.
  return new RegExp(`${quoted}\\}/${n}\\b|\\b${n}/\\$\\{`).test(text);
}

describe('one run-folder layout', () => {
  it('no module but store/layout.ts spells a run-folder file or folder name', () => {
    const stages: ReadonlySet<string> = new Set(STAGE_NAMES);
    const names = [
      ...Object.values(RUN_FILE),
      ...Object.values(STEP_FILE),
      ...Object.values(EVAL_FILE),
      ...[...Object.values(STEP_DIR), ...Object.values(RUN_DIR)].filter((n) => !stages.has(n)),
      // The slow update's two rollouts of the same items, and the analysts' raw replies.
      'rollout_prev',
      'rollout_curr',
      'minibatch_',
    ];
    const found: string[] = [];
    for (const file of sources(src)) {
      const rel = relative(src, file).split(sep).join('/');
      // The webview is browser code: it never sees a path.
      if (rel === LAYOUT || rel.startsWith('webview/')) continue;
      const text = readFileSync(file, 'utf8')
        // Comments name files to say what code does; only code builds paths.
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      for (const name of names) {
        if (
          name === 'minibatch_'
            ? /['"`]minibatch_\$\{|['"`]minibatch_(fail|succ)/.test(text)
            : spelled(text, name)
        )
          found.push(`${rel}: ${name}`);
      }
    }
    assert.deepEqual(found, []);
  });

  it('only protocol/vocabulary.ts spells the step name (`step_0003`: folders and origin labels)', () => {
    const VOCABULARY = ['protocol', 'vocabulary.ts'].join('/');
    const found = sources(src)
      .map((file) => relative(src, file).split(sep).join('/'))
      .filter((rel) => rel !== VOCABULARY)
      .filter((rel) => /step_\$\{|step_\(\\d|step_\\d/.test(readFileSync(join(src, rel), 'utf8')));
    assert.deepEqual(found, []);
  });
});
