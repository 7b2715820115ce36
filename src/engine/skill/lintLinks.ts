/**
 * The files a SKILL.md points to inside its own package: Markdown links and bare paths under
 * `references/`, `scripts/` and `assets/` (the folders the agent reads on demand). Lint checks that
 * each one exists beside the skill; a link that leads nowhere costs the agent a turn at best.
 */

/** The package folders an agent opens on demand (Agent Skills spec). */
export const PACKAGE_DIRS = ['references', 'scripts', 'assets'] as const;

export interface PackageLink {
  /** The path as a package-relative file name (`references/guide.md`), fragment and `./` removed. */
  path: string;
  /** Offsets in the scanned text: the whole link (`[text](target)`) or the bare path. */
  start: number;
  end: number;
  /** A Markdown link's text, which replaces the link when the link is removed. */
  linkText?: string;
}

// [text](target "title") or [text](<target with spaces>); images too (the `!` stays outside).
const MARKDOWN_LINK = /\[([^\]\n]*)\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+(?:"[^"\n]*"|'[^'\n]*'))?\s*\)/g;
// A path the prose or a code span names: not part of a longer path or a URL.
const BARE_PATH = /(?<![\w./~:@-])(?:\.\/)?(?:references|scripts|assets)\/[\w./-]*[\w-]/g;

/** The package-relative path a link target names, or undefined when it points elsewhere. */
export function packagePath(target: string): string | undefined {
  let t = target.trim();
  if (t.startsWith('<') && t.endsWith('>')) t = t.slice(1, -1).trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(t) || t.startsWith('#') || t.startsWith('/')) return undefined;
  t = t.replace(/[#?].*$/, '');
  try {
    t = decodeURI(t);
  } catch {
    // A malformed escape is kept as written; the existence check reports it.
  }
  t = t.replace(/^(?:\.\/)+/, '').replace(/\/+$/, '');
  const first = t.split('/')[0];
  if (!first || !(PACKAGE_DIRS as readonly string[]).includes(first) || t === first) return undefined;
  if (t.split('/').includes('..')) return undefined;
  return t;
}

/** Every package path `text` names, in order; a bare path inside a link is the link's. */
export function findPackageLinks(text: string): PackageLink[] {
  const links: PackageLink[] = [];
  for (const m of text.matchAll(MARKDOWN_LINK)) {
    const path = packagePath(m[2] ?? '');
    if (path === undefined) continue;
    links.push({ path, start: m.index, end: m.index + m[0].length, linkText: m[1] ?? '' });
  }
  const covered = links.map((l) => [l.start, l.end] as const);
  for (const m of text.matchAll(BARE_PATH)) {
    const start = m.index;
    if (covered.some(([s, e]) => start >= s && start < e)) continue;
    const path = packagePath(m[0]);
    if (path === undefined) continue;
    links.push({ path, start, end: start + m[0].length });
  }
  return links.sort((a, b) => a.start - b.start);
}
