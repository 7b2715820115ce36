/**
 * Edits of a skill package: each edit names its file (`file`, default SKILL.md) and is applied to
 * that file's text alone, so an anchor never reaches across files and an append lands at the end of
 * its own file. Changing or adding a file outside `optimizer.package_edits` is refused and recorded
 * in the report (`skipped_outside_policy`, with the reason), like every other skipped edit.
 */
import type { ApplyOptions, ApplyResult, Edit, EditReportRow } from '../applyEdits';
import { collisionFor, refusalFor, sizeRefusal, DEFAULT_PACKAGE_POLICY } from './policy';
import { brokenLinkReason, brokenLinksAdded, packagePaths } from './links';
import { joinPackage, packageFileCount, SKILL_FILE, splitPackage } from './text';

export const OUTSIDE_POLICY = 'skipped_outside_policy' as const;

type ApplyText = (text: string, edits: readonly Edit[], options: ApplyOptions) => ApplyResult;

/** The file an edit names: SKILL.md unless it says otherwise (`./` and `\` are accepted). */
export function editFile(edit: unknown): string {
  const file = typeof edit === 'object' && edit !== null ? (edit as { file?: unknown }).file : undefined;
  if (typeof file !== 'string' || !file.trim()) return SKILL_FILE;
  return file.trim().replace(/\\/g, '/').replace(/^\.\//, '');
}

/** A file an edit adds that is made runnable, as its author would: a `#!` script in scripts/. */
export function isAddedScript(path: string, text: string): boolean {
  return path.startsWith('scripts/') && text.startsWith('#!');
}

/** True when some edit names a file other than SKILL.md. */
export function namesOtherFiles(edits: readonly unknown[]): boolean {
  return Array.isArray(edits) && edits.some((e) => editFile(e) !== SKILL_FILE);
}

export function applyPackageEdits(
  text: string,
  edits: readonly Edit[],
  options: ApplyOptions,
  applyText: ApplyText,
): ApplyResult {
  const policy = options.packagePolicy ?? DEFAULT_PACKAGE_POLICY;
  const start = splitPackage(text);
  // A lone SKILL.md's siblings on disk are not in its text, so its links cannot be checked here.
  if (!policy.folder && start.files.length === 0 && start.readOnly.length === 0)
    return applyInOrder(text, edits, options, applyText, undefined);
  // A link SKILL.md gains may name a file a later edit of the set adds, but not one a refused edit
  // would have added: apply against the files the set ends with until those stop changing.
  let exists = namesOtherFiles(edits) ? undefined : packagePaths(start);
  for (let round = 0; ; round++) {
    const out = applyInOrder(text, edits, options, applyText, exists);
    const files = packagePaths(splitPackage(out.text));
    if (exists && (sameSet(files, exists) || round > edits.length)) return out;
    exists = files;
  }
}

const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>): boolean =>
  a.size === b.size && [...a].every((x) => b.has(x));

/**
 * The edits applied in list order; with `exists`, an edit adding a SKILL.md link to a path outside
 * it is refused.
 */
function applyInOrder(
  text: string,
  edits: readonly Edit[],
  options: ApplyOptions,
  applyText: ApplyText,
  exists: ReadonlySet<string> | undefined,
): ApplyResult {
  const policy = options.packagePolicy ?? DEFAULT_PACKAGE_POLICY;
  const pkg = splitPackage(text);
  const singleFile = !policy.folder && pkg.files.length === 0 && pkg.readOnly.length === 0;
  const report: EditReportRow[] = [];
  edits.forEach((edit, i) => {
    const file = editFile(edit);
    const renumber = (rows: EditReportRow[]): EditReportRow[] =>
      rows.map((r) => ({ ...r, index: i + 1, ...(file !== SKILL_FILE ? { file } : {}) }));
    if (file === SKILL_FILE) {
      const out = applyText(pkg.skill, [edit], options);
      const broken = exists && out.text !== pkg.skill ? brokenLinksAdded(pkg.skill, out.text, exists) : [];
      if (broken.length) {
        const error = brokenLinkReason(broken);
        report.push(...renumber(out.report).map((r) => ({ ...r, status: OUTSIDE_POLICY, error })));
        return;
      }
      pkg.skill = out.text;
      report.push(...renumber(out.report));
      return;
    }
    const existing = pkg.files.find((f) => f.path === file);
    const refuse = (reason: string): void => {
      const [row] = applyText('', [{ ...edit, op: '' }], { ...options, skillFile: false }).report;
      report.push({
        ...renumber([row])[0],
        op: String(edit.op ?? ''),
        status: OUTSIDE_POLICY,
        error: reason,
      });
    };
    if (singleFile) {
      return refuse(
        `the skill is a single file, so ${file} cannot be added: name the skill's folder in env.skill_init (a folder holding SKILL.md) to let edits add files`,
      );
    }
    if (pkg.readOnly.some((f) => f.path === file))
      return refuse(`${file} is carried read-only (a binary file, or over the text size limit)`);
    const refusal = refusalFor(file, policy);
    if (refusal) return refuse(refusal);
    const collision = existing
      ? undefined
      : collisionFor(file, [SKILL_FILE, ...pkg.files.map((f) => f.path), ...pkg.readOnly.map((f) => f.path)]);
    if (collision) return refuse(collision);
    // max_files bounds the whole folder as the agent gets it: SKILL.md and read-only files count.
    const count = packageFileCount(pkg);
    if (!existing && count + 1 > policy.maxFiles)
      return refuse(
        `adding ${file} would make the skill ${count + 1} files (SKILL.md included), over optimizer.package_edits.max_files (${policy.maxFiles})`,
      );
    const out = applyText(existing?.text ?? '', [edit], { ...options, skillFile: false });
    // An append to an empty document starts with the blank line that separates it from the text before.
    if (!existing) out.text = out.text.replace(/^\n+/, '');
    const tooBig = sizeRefusal(file, out.text, policy);
    if (tooBig) return refuse(tooBig);
    if (existing) existing.text = out.text;
    else if (out.text !== '')
      pkg.files.push({
        path: file,
        text: out.text,
        ...(isAddedScript(file, out.text) ? { executable: true } : {}),
      });
    report.push(...renumber(out.report));
  });
  return { text: joinPackage(pkg), report };
}
