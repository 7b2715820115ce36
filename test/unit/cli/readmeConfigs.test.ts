import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { cliProcess } from '../../support/cliProcess';

// Every config a user may copy from the README must pass `skillopt validate`: each ```yaml block is
// laid over the bundled example config (the README's blocks are sections, not whole configs).

const root = join(__dirname, '..', '..', '..');
const example = join(root, 'examples', 'house-style');

/** The README's ```yaml blocks, with the line each starts on. */
function readmeYamlBlocks(): { line: number; text: string }[] {
  const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n');
  const blocks: { line: number; text: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```yaml') continue;
    const end = lines.findIndex((l, j) => j > i && l.trim() === '```');
    assert.ok(end > i, `README.md:${i + 1}: a yaml block that never closes`);
    blocks.push({ line: i + 1, text: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

type Tree = Record<string, unknown>;
const isTree = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);

function overlay(base: Tree, top: Tree): Tree {
  const out: Tree = { ...base };
  for (const [k, v] of Object.entries(top)) out[k] = isTree(v) && isTree(out[k]) ? overlay(out[k], v) : v;
  return out;
}

describe('README config examples', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    // The folder keeps the example's name: the skill's front-matter `name` must match it.
    dir = join(mkdtempSync(join(tmpdir(), 'skillopt-readme-')), 'house-style');
    cpSync(example, dir, { recursive: true });
  });
  afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

  const blocks = readmeYamlBlocks();
  it('the README has yaml blocks to check', () => assert.ok(blocks.length > 0));

  for (const block of blocks) {
    it(`README.md:${block.line} validates over the example config`, () => {
      const top: unknown = parse(block.text);
      assert.ok(isTree(top), `README.md:${block.line}: not a YAML mapping`);
      const base = parse(readFileSync(join(example, 'skillopt.yaml'), 'utf8')) as Tree;
      const cfg = join(dir, 'skillopt.yaml');
      writeFileSync(cfg, stringify(overlay(base, top)));
      const r = cliProcess(['validate', cfg, '--json']);
      assert.equal(r.code, 0, `README.md:${block.line}: ${r.stdout}${r.stderr}`);
      const report = JSON.parse(r.stdout) as { warnings?: string[] };
      // A key validate only warns about (no effect, ignored, misspelt) is drift too.
      const drift = (report.warnings ?? []).filter((w) => /no effect|ignored|did you mean|not read/i.test(w));
      assert.deepEqual(drift, [], `README.md:${block.line}`);
    });
  }
});
