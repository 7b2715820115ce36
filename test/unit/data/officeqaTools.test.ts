import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DocCorpus,
  docsRoots,
  fnmatchRegExp,
  MAX_DOC_BYTES,
} from '../../../src/engine/data/officeqa/docTools';
import {
  oracleContext,
  oracleRefs,
  pageNumberOf,
  renderParsedPage,
} from '../../../src/engine/data/officeqa/oracle';
import { SkillOptError } from '../../../src/engine/errors';

const fixture = join(__dirname, '..', '..', 'fixtures', 'benchmarks');
const docs = join(fixture, 'officeqa-docs', 'docs');

/** The reference's tool_runtime.py run on the fixture (paths under the documents root as <ROOT>). */
interface Probes {
  root_is_transformed: boolean;
  pages: Array<{ file: string; page: number; text: string }>;
  page_numbers: Array<{ url: string; page: number | null }>;
  refs: Array<{ files: string[]; docs: string[]; refs: Array<[string, number, string]> }>;
  candidates_all: string[];
  candidates_named: string[];
  tools: Array<{ name: string; arguments: Record<string, unknown>; allowed: string[]; obs: string }>;
}
const probes = JSON.parse(readFileSync(join(fixture, 'officeqa-tools.json'), 'utf8')) as Probes;

describe("OfficeQA's document tools and oracle pages agree with the reference's tool_runtime.py", () => {
  const roots = docsRoots([docs]);
  const root = roots[0];
  const corpus = new DocCorpus(roots);
  const unroot = (s: string): string => s.split(root).join('<ROOT>');
  const reroot = (v: unknown): unknown => (typeof v === 'string' ? v.split('<ROOT>').join(root) : v);

  it('reads the transformed/ folder of a data dir, as the reference does', () => {
    assert.equal(probes.root_is_transformed, true);
    assert.equal(root, realpathSync(join(docs, 'transformed')));
  });

  it('renders each parsed page as the reference does (tables as Markdown, entities, page ids)', () => {
    for (const p of probes.pages)
      assert.equal(renderParsedPage(join(docs, 'jsons', p.file), p.page), p.text, `${p.file} page ${p.page}`);
  });

  it("reads a source URL's page and pairs each with its file", () => {
    for (const p of probes.page_numbers) assert.equal(pageNumberOf(p.url), p.page ?? undefined, p.url);
    for (const r of probes.refs)
      assert.deepEqual(
        oracleRefs(r.files, r.docs).map((x) => [x.file, x.page, x.doc]),
        r.refs,
      );
  });

  it('finds the candidate files (the walk is sorted here; the reference keeps the file system order)', () => {
    assert.deepEqual(corpus.candidates([]).map(unroot).sort(), [...probes.candidates_all].sort());
    assert.deepEqual(
      corpus.candidates(['treasury_bulletin_1942_07.txt', 'missing.txt']).map(unroot),
      probes.candidates_named,
    );
  });

  it('answers glob, read and grep with the observations the reference gives', () => {
    for (const t of probes.tools) {
      const args = Object.fromEntries(Object.entries(t.arguments).map(([k, v]) => [k, reroot(v)]));
      const got = unroot(corpus.run({ name: t.name, arguments: args }, new Set(t.allowed)).obs);
      // glob lists in walk order, which the reference leaves to the file system.
      const norm = (s: string): string => (t.name === 'glob' ? s.split('\n').sort().join('\n') : s);
      assert.equal(norm(got), norm(t.obs), `${t.name} ${JSON.stringify(t.arguments)}`);
    }
  });

  it('translates glob patterns as Python fnmatch does', () => {
    const m = (p: string, s: string): boolean => fnmatchRegExp(p).test(s);
    assert.ok(m('*.txt', 'a/b.txt'), '* crosses folders');
    assert.ok(m('a?c', 'abc') && !m('a?c', 'ac'));
    assert.ok(m('[!x]*', 'abc') && !m('[!x]*', 'xbc'));
    assert.ok(m('[ab].txt', 'b.txt') && !m('[ab].txt', 'c.txt'));
    assert.ok(m('a[.txt', 'a[.txt'), 'an unclosed [ is literal');
    assert.ok(m('(x)+.txt', '(x)+.txt') && !m('A*', 'abc'), 'regex characters are literal; case counts');
  });
});

describe('OfficeQA document tools: the sandbox and the bounds', () => {
  let dir: string;
  let corpus: DocCorpus;
  let root: string;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'skillopt-oqa-')));
    root = join(dir, 'corpus');
    mkdirSync(join(root, 'sub'), { recursive: true });
    writeFileSync(join(dir, 'secret.txt'), 'password: hunter2\n');
    writeFileSync(
      join(root, 'a.txt'),
      Array.from({ length: 300 }, (_, i) => `line ${i + 1} value ${'x'.repeat(40)}`).join('\n'),
    );
    writeFileSync(join(root, 'sub', 'b.txt'), 'beta\n');
    symlinkSync(join(dir, 'secret.txt'), join(root, 'link.txt'));
    symlinkSync(dir, join(root, 'outside'));
    for (let i = 0; i < 60; i++)
      writeFileSync(join(root, 'sub', `f${String(i).padStart(2, '0')}.txt`), 'x\n');
    corpus = new DocCorpus(docsRoots([root]));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const run = (name: string, args: Record<string, unknown>, allowed: string[] = []): string =>
    corpus.run({ name, arguments: args }, new Set(allowed)).obs;

  it('opens nothing outside the folders: ../, absolute paths, links out', () => {
    for (const path of [
      '../secret.txt',
      join(dir, 'secret.txt'),
      join(root, 'link.txt'),
      'outside/secret.txt',
      '/etc/passwd',
    ])
      for (const tool of ['read', 'grep']) {
        const obs = run(tool, { path, pattern: 'password' });
        assert.match(obs, /not one you may open/, `${tool} ${path}: ${obs}`);
        assert.doesNotMatch(obs, /hunter2/);
      }
    assert.doesNotMatch(run('glob', { pattern: '*secret*' }), /outside/, 'a linked folder is not walked');
  });

  it('reads a path relative to a folder, and only the allowed files when the item names them', () => {
    assert.equal(run('read', { path: 'sub/b.txt' }), 'beta\n');
    assert.match(run('read', { path: join(root, 'sub', 'b.txt') }, ['a.txt']), /not one you may open/);
    assert.equal(run('glob', { pattern: '*.txt' }, ['b.txt']), join(root, 'sub', 'b.txt'));
  });

  it('bounds every observation: 4,000 characters a read, 20 grep rows, 50 glob matches', () => {
    assert.equal(run('read', { path: 'a.txt', limit: 300 }).length, 4000);
    assert.equal(run('grep', { pattern: 'VALUE', path: 'a.txt' }).split('\n').length, 20);
    assert.equal(run('glob', { pattern: '*' }).split('\n').length, 50);
  });

  it('turns a bad call into an observation: no path, bad numbers, unknown tool, missing or huge file', () => {
    assert.match(run('read', {}), /no path given/);
    assert.match(run('read', { path: 'a.txt', start: 'two' }), /whole numbers/);
    assert.match(run('grep', { path: 'a.txt' }), /pattern and path/);
    assert.match(run('search', { q: 'x' }), /no tool named "search"/);
    assert.match(run('read', { path: 'nope.txt' }), /no such file/);
    const big = join(root, 'big.txt');
    writeFileSync(big, '');
    truncateSync(big, MAX_DOC_BYTES + 1);
    assert.match(run('read', { path: 'big.txt' }), /larger than 32 MiB/);
    rmSync(big);
  });

  it('refuses a data dir that is not a folder, naming env.data_dirs', () => {
    assert.throws(
      () => docsRoots([join(dir, 'missing')]),
      (e: unknown) => SkillOptError.is(e, 'config') && e.place.key === 'env.data_dirs',
    );
  });

  it('cuts a page at 24,000 characters and all pages at 80,000, as the reference does', () => {
    const jsons = join(dir, 'jsons');
    mkdirSync(jsons, { recursive: true });
    const elements = Array.from({ length: 5 }, (_, p) => ({
      content: `${p}`.repeat(30_000),
      bbox: [{ page_id: p + 1 }],
    }));
    writeFileSync(join(jsons, 'big.json'), JSON.stringify({ document: { elements } }));
    const docsList = Array.from({ length: 5 }, (_, p) => `https://x/?page=${p + 1}`);
    const text = oracleContext(['big.txt'], docsList, [root], 'note.');
    const pages = text.split('### big.txt, page ').slice(1);
    assert.equal(pages.length, 4, 'the fourth page is cut and the fifth left out');
    assert.match(pages[0], /6000 more characters of this page left out/);
    assert.match(pages[3], /the oracle pages are cut here/);
    assert.ok(text.length < 80_000 + 1000);
  });
});
