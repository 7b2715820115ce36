/**
 * How a skill package reaches a model. Chat targets get SKILL.md followed by the text files it
 * refers to (and the files those refer to), each clearly delimited. The optimizer gets SKILL.md, the
 * package's file tree (size, editable or read-only) and the text of the files the trajectories
 * touched; binary and read-only files are named, never shown. A single-file skill is shown as is.
 */
import type { RolloutResult } from '../../../protocol/records';
import { refusalFor, sizeRefusal, type PackageEditPolicy } from './policy';
import { SKILL_FILE, splitPackage, type SkillPackage } from './text';

const fileBlock = (path: string, text: string): string =>
  `<skill_file path="${path}">\n${text.replace(/\n$/, '')}\n</skill_file>`;

/** The text files SKILL.md names by path, and those they name in turn. */
export function linkedFiles(pkg: SkillPackage): string[] {
  const found = new Set<string>();
  const queue = [pkg.skill];
  while (queue.length) {
    const text = queue.shift()!;
    for (const f of pkg.files) {
      if (found.has(f.path) || !text.includes(f.path)) continue;
      found.add(f.path);
      queue.push(f.text);
    }
  }
  return pkg.files.map((f) => f.path).filter((p) => found.has(p));
}

/** What a chat target is given as the skill. */
export function chatSkillView(text: string): string {
  const pkg = splitPackage(text);
  const linked = linkedFiles(pkg);
  if (!linked.length) return pkg.skill;
  const blocks = linked.map((p) => fileBlock(p, pkg.files.find((f) => f.path === p)!.text));
  return `${pkg.skill.trimEnd()}\n\n---\nThe files of this skill that SKILL.md refers to:\n\n${blocks.join('\n\n')}\n`;
}

/**
 * The package files an agent's trajectories opened or named (tool-call details mention the path);
 * for trajectories without tool calls (chat targets), the files SKILL.md refers to.
 */
export function touchedFiles(text: string, results: readonly RolloutResult[]): string[] {
  const pkg = splitPackage(text);
  if (!pkg.files.length) return [];
  const calls = results.flatMap((r) => r.agent_run?.tool_calls ?? []);
  if (!calls.length) return linkedFiles(pkg);
  const details = calls.map((c) => c.detail ?? '').join('\n');
  return pkg.files.map((f) => f.path).filter((p) => details.includes(p));
}

/** The skill as the optimizer sees it in every stage's prompt. */
export function optimizerSkillView(
  text: string,
  policy: PackageEditPolicy,
  touched?: readonly string[],
): string {
  const pkg = splitPackage(text);
  if (!policy.folder && !pkg.files.length && !pkg.readOnly.length) return text.trim();
  const shown = touched ?? linkedFiles(pkg);
  const mark = (path: string): string => (refusalFor(path, policy) ? 'read-only' : 'editable');
  // A file already over max_file_bytes cannot take any edit: said, so no edit is spent on it.
  const markFile = (f: { path: string; text: string }): string =>
    mark(f.path) === 'editable' && sizeRefusal(f.path, f.text, policy)
      ? 'read-only: over the size limit for edited files'
      : mark(f.path);
  const tree = [
    `- ${SKILL_FILE} (${mark(SKILL_FILE)})`,
    ...pkg.files.map(
      (f) =>
        `- ${f.path} (${Buffer.byteLength(f.text, 'utf8')} bytes, ${markFile(f)}${shown.includes(f.path) ? ', shown below' : ''})`,
    ),
    ...pkg.readOnly.map((f) => `- ${f.path} (${f.bytes} bytes, binary or too large: read-only, not shown)`),
  ];
  const blocks = pkg.files.filter((f) => shown.includes(f.path)).map((f) => fileBlock(f.path, f.text));
  return [
    pkg.skill.trim(),
    '',
    PACKAGE_OPEN,
    `This skill is a folder (SKILL.md is the text above${tree.length > 1 ? '' : '; no other files yet'}). Its files:`,
    ...tree,
    ...(blocks.length ? ['', ...blocks] : []),
    '',
    'An edit changes SKILL.md unless it names another file with "file": "<path>" (its target is then text of that file).',
    `An "append" to a new path creates that file; only editable paths may change or be added (at most ${policy.maxFiles} files in the skill, SKILL.md included, of ${policy.maxFileBytes} bytes each).`,
    'A path SKILL.md names under references/, scripts/ or assets/ must be a file of the skill or one an edit of the same set adds.',
    'Scripts are never run while the skill is trained. Do not copy this listing into the skill.',
    PACKAGE_CLOSE,
  ].join('\n');
}

const PACKAGE_OPEN = '<skill_package>';
const PACKAGE_CLOSE = '</skill_package>';

/** A whole skill the optimizer wrote, without the package listing it may have copied from its prompt. */
export function withoutPackageView(text: string): string {
  const start = text.indexOf(PACKAGE_OPEN);
  const end = text.indexOf(PACKAGE_CLOSE, start);
  if (start < 0 || end < 0) return text;
  return `${text.slice(0, start).trimEnd()}\n${text.slice(end + PACKAGE_CLOSE.length).replace(/^\n+/, '')}`;
}
