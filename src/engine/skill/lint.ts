/**
 * Front-matter lint of a SKILL.md, before anything is spent: what makes an agent host skip the
 * skill (no front matter, bad YAML, no name or description, a name that is not its folder's, too
 * long), what makes it lose its description (the hosts' listing budgets) and links into the package
 * that lead nowhere. One rule set for `skillopt validate`, run preparation (lintForRun.ts), the
 * editor's diagnostics and the Skills view (`lintSkillFile`, `lintStatus`).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { stringify as yamlStringify } from 'yaml';
import { parseFrontMatter, type FrontMatter } from './frontMatter';
import { findPackageLinks } from './lintLinks';
import { entryRange, lineRange, lineStarts, position, valueRange } from './lintRanges';

export const SKILL_FILE_NAME = 'SKILL.md';
/** Agent Skills spec limits; Codex refuses to load a skill past either (its loader's constants). */
export const NAME_MAX_CHARS = 64;
export const DESCRIPTION_MAX_CHARS = 1024;
/** What each host keeps for the listing of all skills' descriptions; past it, descriptions are dropped. */
export const DESCRIPTION_BUDGETS: readonly { host: string; chars: number }[] = [
  { host: 'Codex', chars: 8_000 },
  { host: 'Claude Code', chars: 15_000 },
];
/** Sibling skills read for the budget; a skills folder with more is summed up to here. */
const MAX_SIBLINGS = 500;

export type LintRule =
  | 'front-matter-missing'
  | 'front-matter-yaml'
  | 'name-missing'
  | 'name-folder'
  | 'name-length'
  | 'name-format'
  | 'description-missing'
  | 'description-length'
  | 'description-budget'
  | 'link-broken';

export type LintFixId = 'name-from-folder' | 'trim-description' | 'create-file' | 'remove-link';

/** 0-based, end exclusive, as editors count. */
export interface LintRange {
  startLine: number;
  startCol: number;
  endLine: number;
  endCol: number;
}

export interface LintFix {
  id: LintFixId;
  title: string;
  /** A text edit in the SKILL.md itself. */
  edit?: { range: LintRange; newText: string };
  /** A file to create (absolute path), empty. */
  createFile?: string;
}

export interface LintFinding {
  rule: LintRule;
  severity: 'error' | 'warning';
  file: string;
  range: LintRange;
  /** What is wrong, why it matters, and `Fix: …`. */
  message: string;
  fixes: LintFix[];
}

export interface LintContext {
  /** The SKILL.md's path: named in findings; files to create are resolved beside it. */
  file: string;
  /** The folder the SKILL.md is in (its name must equal `name`); absent for a loose Markdown file. */
  folderName?: string;
  /** Whether a package-relative path (`references/x.md`) exists beside the skill. */
  exists?: (path: string) => boolean;
  /** Description lengths of the other skills in the same skills folder. */
  siblings?: readonly { name: string; chars: number }[];
}

/** Characters as the hosts count them: code points, whitespace runs as one space (Codex). */
export function hostChars(value: string): number {
  return [...value.replace(/\s+/g, ' ').trim()].length;
}

const SPEC_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const fmt = (n: number): string => n.toLocaleString('en-US');

/** The lint findings of a SKILL.md's text. */
export function lintSkillText(text: string, ctx: LintContext): LintFinding[] {
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  const fm = parseFrontMatter(text);
  const out: LintFinding[] = [];
  const at = (
    rule: LintRule,
    severity: LintFinding['severity'],
    range: LintRange,
    message: string,
    fixes: LintFix[] = [],
  ): void => {
    out.push({ rule, severity, file: ctx.file, range, message, fixes });
  };
  if (!fm) {
    const opened = /^\uFEFF?---[ \t]*$/.test(lines[0] ?? '');
    if (opened) {
      at(
        'front-matter-yaml',
        'error',
        lineRange(lines, 0),
        'front matter is not closed: agents read no name or description from it. Fix: end the block with a `---` line after the description',
      );
    } else {
      at(
        'front-matter-missing',
        'error',
        lineRange(lines, 0),
        `no front matter: agents list a skill by the \`name\` and \`description\` at the top of ${SKILL_FILE_NAME} and skip a file without them. Fix: start the file with \`---\`, \`name: ${ctx.folderName ?? 'my-skill'}\`, \`description: what it does and when to use it\`, \`---\``,
      );
    }
    out.push(...linkFindings(text, 0, ctx));
    return out;
  }
  for (const e of fm.errors) {
    at(
      'front-matter-yaml',
      'error',
      lineRange(lines, e.line),
      `front matter is not valid YAML (${e.message}): agents skip the skill. Fix: correct the YAML; quote a value that holds \`: \` or starts with a special character`,
    );
  }
  if (fm.errors.length === 0) {
    out.push(...nameFindings(fm, lines, ctx), ...descriptionFindings(fm, lines, ctx));
  }
  out.push(...linkFindings(text, fm.endLine + 1, ctx));
  return out;
}

function nameFindings(fm: FrontMatter, lines: string[], ctx: LintContext): LintFinding[] {
  const out: LintFinding[] = [];
  const file = ctx.file;
  const folder = ctx.folderName;
  const fix = folder !== undefined ? [nameFix(fm, lines, folder)] : [];
  const keyLine = fm.keyLines.name;
  const name = fm.name?.trim();
  if (keyLine === undefined || name === undefined || name === '') {
    const what =
      keyLine === undefined
        ? 'has no `name`'
        : fm.name === undefined
          ? '`name` is not a string'
          : '`name` is empty';
    const range = keyLine === undefined ? lineRange(lines, 0) : valueRange(lines, keyLine);
    out.push({
      rule: 'name-missing',
      severity: 'error',
      file,
      range,
      message: `front matter ${what}: VS Code, Copilot and Codex do not load the skill. Fix: add \`name: ${folder ?? 'my-skill'}\`${folder !== undefined ? ' (the folder name)' : ''}`,
      fixes: fix,
    });
    return out;
  }
  const range = valueRange(lines, keyLine);
  if (folder !== undefined && name !== folder) {
    out.push({
      rule: 'name-folder',
      severity: 'error',
      file,
      range,
      message: `name "${name}" is not the name of its folder "${folder}": VS Code and Copilot do not load a skill whose name differs from its folder. Fix: set \`name: ${folder}\`, or rename the folder to ${name}`,
      fixes: fix,
    });
  }
  const chars = hostChars(name);
  if (chars > NAME_MAX_CHARS) {
    out.push({
      rule: 'name-length',
      severity: 'error',
      file,
      range,
      message: `name is ${fmt(chars)} characters, over the limit of ${NAME_MAX_CHARS}: Codex does not load the skill. Fix: shorten the name (and the folder with it)`,
      fixes: [],
    });
  }
  if (!SPEC_NAME.test(name)) {
    const suggestion = kebab(name);
    out.push({
      rule: 'name-format',
      severity: 'warning',
      file,
      range,
      message: `name "${name}" is not lowercase letters, digits and single hyphens (Agent Skills spec; hosts that follow it refuse the skill). Fix: ${suggestion ? `use "${suggestion}" for the name and the folder` : 'rename it in lowercase letters, digits and hyphens'}`,
      fixes: [],
    });
  }
  return out;
}

function descriptionFindings(fm: FrontMatter, lines: string[], ctx: LintContext): LintFinding[] {
  const out: LintFinding[] = [];
  const keyLine = fm.keyLines.description;
  const description = fm.description;
  if (keyLine === undefined || description === undefined || description.trim() === '') {
    const what =
      keyLine === undefined
        ? 'has no `description`'
        : description === undefined
          ? '`description` is not a string'
          : '`description` is empty';
    out.push({
      rule: 'description-missing',
      severity: 'error',
      file: ctx.file,
      range: keyLine === undefined ? lineRange(lines, 0) : valueRange(lines, keyLine),
      message: `front matter ${what}: the agent decides from the description alone whether to open the skill, and VS Code, Copilot and Codex do not load a skill without one. Fix: add \`description:\` saying what the skill does and when to use it`,
      fixes: [],
    });
    return out;
  }
  const range = valueRange(lines, keyLine);
  const chars = hostChars(description);
  if (chars > DESCRIPTION_MAX_CHARS) {
    const trimmed = trimTo(description, DESCRIPTION_MAX_CHARS);
    out.push({
      rule: 'description-length',
      severity: 'error',
      file: ctx.file,
      range,
      message: `description is ${fmt(chars)} characters, over the limit of ${fmt(DESCRIPTION_MAX_CHARS)}: Codex does not load the skill and other hosts cut it. Fix: shorten it to what the skill does and when to use it`,
      fixes: [
        {
          id: 'trim-description',
          title: `Trim the description to ${fmt(DESCRIPTION_MAX_CHARS)} characters`,
          edit: { range: entryRange(fm, lines, keyLine), newText: `description: ${yamlScalar(trimmed)}` },
        },
      ],
    });
  }
  const siblings = ctx.siblings ?? [];
  const total = chars + siblings.reduce((s, x) => s + x.chars, 0);
  const over = DESCRIPTION_BUDGETS.filter((b) => total > b.chars);
  if (over.length > 0) {
    const alone = over.filter((b) => chars > b.chars);
    const hosts = over.map((b) => `${b.host}'s ~${fmt(b.chars)}`).join(' and ');
    const message =
      alone.length === over.length
        ? `description alone is ${fmt(chars)} characters, over ${hosts}-character listing of all skills' descriptions: the host drops descriptions past it. Fix: shorten it`
        : `this description (${fmt(chars)} characters) and those of the ${siblings.length} other skill(s) in its skills folder total ${fmt(total)}, over ${hosts}-character listing of all skills' descriptions: the host drops descriptions past it and those skills stop triggering. Fix: shorten the longest descriptions`;
    out.push({ rule: 'description-budget', severity: 'warning', file: ctx.file, range, message, fixes: [] });
  }
  return out;
}

function linkFindings(text: string, firstLine: number, ctx: LintContext): LintFinding[] {
  const exists = ctx.exists;
  if (!exists) return [];
  const starts = lineStarts(text);
  const bodyStart = starts[firstLine] ?? text.length;
  const out: LintFinding[] = [];
  for (const link of findPackageLinks(text.slice(bodyStart))) {
    if (exists(link.path)) continue;
    const [startLine, startCol] = position(starts, bodyStart + link.start);
    const [endLine, endCol] = position(starts, bodyStart + link.end);
    const range = { startLine, startCol, endLine, endCol };
    const fixes: LintFix[] = [
      { id: 'create-file', title: `Create ${link.path}`, createFile: join(dirname(ctx.file), link.path) },
    ];
    if (link.linkText !== undefined) {
      fixes.push({
        id: 'remove-link',
        title: `Remove the link to ${link.path}`,
        edit: { range, newText: link.linkText },
      });
    }
    out.push({
      rule: 'link-broken',
      severity: 'warning',
      file: ctx.file,
      range,
      message: `${link.path} does not exist beside ${basename(ctx.file)}: the agent is told to open a file the package does not ship. Fix: create it, or ${link.linkText !== undefined ? 'remove the link' : 'correct the path'}`,
      fixes,
    });
  }
  return out;
}

function nameFix(fm: FrontMatter, lines: string[], folder: string): LintFix {
  const keyLine = fm.keyLines.name;
  const edit =
    keyLine === undefined
      ? {
          range: { startLine: 1, startCol: 0, endLine: 1, endCol: 0 },
          newText: `name: ${yamlScalar(folder)}\n`,
        }
      : { range: entryRange(fm, lines, keyLine), newText: `name: ${yamlScalar(folder)}` };
  return { id: 'name-from-folder', title: `Set name to the folder name "${folder}"`, edit };
}

/** At most `max` characters, cut at the last word boundary, on one line. */
function trimTo(value: string, max: number): string {
  const flat = [...value.replace(/\s+/g, ' ').trim()];
  if (flat.length <= max) return flat.join('');
  const cut = flat.slice(0, max).join('');
  const space = cut.lastIndexOf(' ');
  return (space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:]+$/, '');
}

function yamlScalar(value: string): string {
  return yamlStringify(value, { lineWidth: 0 }).trimEnd();
}

function kebab(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** Description lengths of the skills beside `skillDir` (each `<sibling>/SKILL.md`). */
function siblingDescriptions(skillDir: string): { name: string; chars: number }[] {
  const parent = dirname(skillDir);
  const own = basename(skillDir);
  let entries: string[];
  try {
    entries = readdirSync(parent, { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== own && !e.name.startsWith('.'))
      .map((e) => e.name)
      .slice(0, MAX_SIBLINGS);
  } catch {
    return [];
  }
  const out: { name: string; chars: number }[] = [];
  for (const name of entries) {
    const path = join(parent, name, SKILL_FILE_NAME);
    if (!existsSync(path)) continue;
    try {
      const description = parseFrontMatter(readFileSync(path, 'utf8'))?.description;
      if (description) out.push({ name, chars: hostChars(description) });
    } catch {
      // An unreadable sibling is not this skill's problem.
    }
  }
  return out;
}

/**
 * Lint a skill file on disk (or `text`, an editor's unsaved buffer, as the file at `path`): the
 * folder rule applies to a file named SKILL.md, links are checked beside it, and the budget counts
 * the other skills in the same skills folder.
 */
export function lintSkillFile(path: string, text?: string): LintFinding[] {
  const dir = dirname(path);
  const inFolder = basename(path) === SKILL_FILE_NAME;
  return lintSkillText(text ?? readFileSync(path, 'utf8'), {
    file: path,
    ...(inFolder ? { folderName: basename(dir), siblings: siblingDescriptions(dir) } : {}),
    exists: (rel) => existsSync(join(dir, rel)),
  });
}

/** A skill's lint in one line for lists (the Skills view): counts and the first error's message. */
export function lintStatus(findings: readonly LintFinding[]): {
  errors: number;
  warnings: number;
  first?: string;
} {
  const errors = findings.filter((f) => f.severity === 'error');
  const first = (errors[0] ?? findings[0])?.message;
  return {
    errors: errors.length,
    warnings: findings.length - errors.length,
    ...(first !== undefined ? { first } : {}),
  };
}
