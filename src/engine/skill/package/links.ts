/**
 * A link an edit adds to SKILL.md must lead to a file of the package: the agent is told to open it,
 * and a package that ships without it costs the agent a turn at best. The lint (lint.ts) only warns
 * about the links a person wrote; a trained edit that adds one is refused, unless an edit of the same
 * set adds the file. SKILL.md's links are read as the lint reads them (lintLinks.ts).
 */
import { parseFrontMatter } from '../frontMatter';
import { findPackageLinks } from '../lintLinks';
import { SKILL_FILE, type SkillPackage } from './text';

/** Every file of the package and every folder holding one, by package-relative path. */
export function packagePaths(pkg: SkillPackage): Set<string> {
  const out = new Set<string>([SKILL_FILE]);
  for (const { path } of [...pkg.files, ...pkg.readOnly]) {
    const parts = path.split('/');
    for (let i = 1; i <= parts.length; i++) out.add(parts.slice(0, i).join('/'));
  }
  return out;
}

/** The package paths SKILL.md's body names (its front matter is not read). */
function linkedPaths(skill: string): Set<string> {
  const body = parseFrontMatter(skill)?.body ?? skill;
  return new Set(findPackageLinks(body).map((l) => l.path));
}

/** The paths `after` links to that are not in `exists` and that `before` did not already name. */
export function brokenLinksAdded(before: string, after: string, exists: ReadonlySet<string>): string[] {
  const had = linkedPaths(before);
  return [...linkedPaths(after)].filter((p) => !exists.has(p) && !had.has(p));
}

/** The apply report's reason for refusing an edit that adds `paths`. */
export function brokenLinkReason(paths: readonly string[]): string {
  const named = paths.join(', ');
  return `it links to ${named}, which the skill does not have and no edit of this set adds: the agent would be told to open a file the skill does not ship. Fix: add ${paths.length === 1 ? 'the file' : 'the files'} in the same set of edits, or name a file the skill has`;
}
