/**
 * OfficeQA's oracle pages (reference `tool_runtime.build_oracle_parsed_pages_context`): the parsed
 * page each `source_docs` URL names (`?page=N`), read from `jsons/<stem>.json` beside the documents,
 * rendered as text (HTML tables as Markdown tables), at most 24,000 characters a page and 80,000 in
 * all, counted in code points as the reference counts them.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { decodeHTML } from 'entities';
import { cpSlice, MAX_DOC_BYTES } from './docTools';

const MAX_PAGE_CHARS = 24_000;
const MAX_CONTEXT_CHARS = 80_000;

/** The page a source URL names: its `page`, `pagenum` or `page_id` query value, else a bare `page=N`. */
export function pageNumberOf(sourceDoc: string): number | undefined {
  const text = sourceDoc.trim();
  if (!text) return undefined;
  const q = text.indexOf('?');
  const query = q < 0 ? '' : text.slice(q + 1).split('#')[0];
  const values = new Map<string, string[]>();
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const value = decode(pair.slice(eq + 1));
    if (value === '') continue;
    const k = decode(pair.slice(0, eq));
    values.set(k, [...(values.get(k) ?? []), value]);
  }
  for (const k of ['page', 'pagenum', 'page_id'])
    for (const v of values.get(k) ?? []) if (/^\s*[+-]?\d+\s*$/.test(v)) return Number(v.trim());
  const bare = /(?:[?&]|^)page=(\d+)/.exec(text);
  return bare ? Number(bare[1]) : undefined;
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** (file, page, url) per source doc: the doc's own file by position, or the only file. */
export function oracleRefs(
  files: readonly string[],
  docs: readonly string[],
): Array<{ file: string; page: number; doc: string }> {
  const out: Array<{ file: string; page: number; doc: string }> = [];
  if (!files.length || !docs.length) return out;
  docs.forEach((doc, i) => {
    const page = pageNumberOf(doc);
    if (page === undefined) return;
    const file = i < files.length ? files[i] : files.length === 1 ? files[0] : undefined;
    if (file === undefined) return;
    if (!out.some((r) => r.file === file && r.page === page && r.doc === doc)) out.push({ file, page, doc });
  });
  return out;
}

/** `jsons/<stem>.json` in a root, its parent, or their `treasury_bulletins_parsed/` folders. */
export function parsedJsonFor(sourceFile: string, roots: readonly string[]): string | undefined {
  const name = basename(sourceFile.trim());
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  if (!stem) return undefined;
  const names = name.endsWith('.json') ? [name, `${stem}.json`] : [`${stem}.json`];
  const places: string[] = [];
  for (const root of roots)
    for (const p of [
      root,
      dirname(root),
      join(root, 'treasury_bulletins_parsed'),
      join(dirname(root), 'treasury_bulletins_parsed'),
    ]) {
      const key = existsSync(p) ? realpathSync(p) : p;
      if (!places.includes(key)) places.push(key);
    }
  for (const place of places)
    for (const n of names) {
      const path = join(place, 'jsons', n);
      if (existsSync(path) && statSync(path).isFile()) return path;
    }
  return undefined;
}

const elementsCache = new Map<string, Array<Record<string, unknown>>>();

/** The `document.elements` of a parsed file (read once per run; a file that is not such JSON has none). */
function elementsOf(path: string): Array<Record<string, unknown>> {
  const hit = elementsCache.get(path);
  if (hit) return hit;
  let elements: Array<Record<string, unknown>> = [];
  if (statSync(path).size <= MAX_DOC_BYTES * 8) {
    try {
      const doc = (JSON.parse(readFileSync(path, 'utf8')) as { document?: { elements?: unknown } } | null)
        ?.document;
      if (Array.isArray(doc?.elements))
        elements = doc.elements.filter(
          (e): e is Record<string, unknown> => !!e && typeof e === 'object' && !Array.isArray(e),
        );
    } catch {
      elements = [];
    }
  }
  if (elementsCache.size >= 256) elementsCache.delete(elementsCache.keys().next().value!);
  elementsCache.set(path, elements);
  return elements;
}

/** Python's `int(x)` for a page id: whole numbers, floats truncated, numeric text; else none. */
function pageIdOf(raw: unknown): number | undefined {
  if (typeof raw === 'number' && Number.isFinite(raw)) return Math.trunc(raw);
  if (typeof raw === 'boolean') return raw ? 1 : 0;
  if (typeof raw === 'string' && /^\s*[+-]?\d+\s*$/.test(raw)) return Number(raw.trim());
  return undefined;
}

/** The text of one parsed page: every element whose boxes lie on it, rendered and joined. */
export function renderParsedPage(jsonPath: string, page: number): string {
  const parts: string[] = [];
  for (const el of elementsOf(jsonPath)) {
    const boxes = Array.isArray(el.bbox) ? el.bbox : [];
    const onPage = boxes.some(
      (b: unknown) => !!b && typeof b === 'object' && pageIdOf((b as { page_id?: unknown }).page_id) === page,
    );
    if (!onPage || typeof el.content !== 'string' || !el.content.trim()) continue;
    const section = renderContent(el.content);
    if (section) parts.push(section);
  }
  return parts.join('\n\n').trim();
}

function renderContent(content: string): string {
  const text = content.trim();
  if (!text) return '';
  if (text.toLowerCase().includes('<table')) return tableToMarkdown(text);
  return decodeHTML(text)
    .replace(/\r\n?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The rows of the `<tr>`/`<td>`/`<th>` cells, as Python's HTMLParser-driven reading collects them. */
function tableRows(html: string): string[][] {
  const rows: string[][] = [];
  let row: string[] | undefined;
  let cell: string[] | undefined;
  const tags = /<!--[\s\S]*?(?:-->|$)|<![^>]*>|<\?[^>]*>|<(\/?)([a-zA-Z][^\s/>]*)([^>]*)>/g;
  let at = 0;
  const text = (s: string): void => {
    if (s && cell) cell.push(decodeHTML(s));
  };
  const start = (tag: string): void => {
    if (tag === 'tr') row = [];
    else if ((tag === 'td' || tag === 'th') && row) cell = [];
  };
  const end = (tag: string): void => {
    if ((tag === 'td' || tag === 'th') && cell && row) {
      row.push(cell.join('').replace(/\s+/g, ' ').trim());
      cell = undefined;
    } else if (tag === 'tr' && row) {
      if (row.some((c) => c)) rows.push(row);
      row = undefined;
      cell = undefined;
    }
  };
  for (const m of html.matchAll(tags)) {
    text(html.slice(at, m.index));
    at = m.index + m[0].length;
    if (m[2] === undefined) continue;
    const tag = m[2].toLowerCase();
    if (m[1]) end(tag);
    else {
      start(tag);
      if (m[3].trimEnd().endsWith('/')) end(tag);
    }
  }
  text(html.slice(at));
  return rows;
}

function tableToMarkdown(html: string): string {
  const rows = tableRows(html);
  if (!rows.length)
    return decodeHTML(html.replace(/<[^>]+>/g, ' '))
      .replace(/\s+/g, ' ')
      .trim();
  const width = Math.max(...rows.map((r) => r.length));
  const cells = rows.map((r) => [...r, ...Array<string>(width - r.length).fill('')]);
  const line = (r: string[]): string =>
    `| ${r.map((c) => c.replace(/\n/g, ' ').replace(/\|/g, '\\|').trim()).join(' | ')} |`;
  return [
    line(cells[0]),
    `| ${Array<string>(width).fill('---').join(' | ')} |`,
    ...cells.slice(1).map(line),
  ].join('\n');
}

function cpLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * The oracle pages of one item as one text block for its task message, or '' when none is found.
 * `note` says how the target should use them (with or without the document tools).
 */
export function oracleContext(
  files: readonly string[],
  docs: readonly string[],
  roots: readonly string[],
  note: string,
): string {
  const blocks: string[] = [];
  let total = 0;
  const seen = new Set<string>();
  for (const ref of oracleRefs(files, docs)) {
    const json = parsedJsonFor(ref.file, roots);
    if (!json || seen.has(`${json}\0${ref.page}`)) continue;
    seen.add(`${json}\0${ref.page}`);
    let page = renderParsedPage(json, ref.page);
    if (!page) continue;
    const length = cpLength(page);
    if (length > MAX_PAGE_CHARS)
      page = `${cpSlice(page, MAX_PAGE_CHARS).trimEnd()}\n\n[… ${length - MAX_PAGE_CHARS} more characters of this page left out …]`;
    let block = `### ${ref.file}, page ${ref.page}\nSource: ${ref.doc}\n\n${page}`;
    const size = cpLength(block);
    if (total + size > MAX_CONTEXT_CHARS) {
      const room = MAX_CONTEXT_CHARS - total;
      if (room <= 0) break;
      block = `${cpSlice(block, room).trimEnd()}\n\n[… the oracle pages are cut here …]`;
      blocks.push(block);
      break;
    }
    blocks.push(block);
    total += size;
  }
  if (!blocks.length) return '';
  return `These pages are parsed from the source documents the question was written from. ${note}\n\n${blocks.join('\n\n')}`;
}
