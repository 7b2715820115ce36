/**
 * A new skill's SKILL.md, and the checks on its name and description before it is written. Pure
 * (no `vscode`).
 */
import { stringify } from 'yaml';
import { DESCRIPTION_MAX_CHARS, hostChars, NAME_MAX_CHARS } from '../../engine/skill/lint';

/** Why a skill name would not load, or undefined when it is fine. */
export function nameProblem(name: string): string | undefined {
  if (!name) return 'Give the skill a name.';
  if (name.length > NAME_MAX_CHARS)
    return `At most ${NAME_MAX_CHARS} characters (this one has ${name.length}).`;
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(name))
    return 'Lowercase letters, digits and single hyphens only, not at the start or end (e.g. pdf-forms).';
  return undefined;
}

export function descriptionProblem(text: string): string | undefined {
  if (!text.trim()) return 'Say what the skill does and when to use it: agents decide from this alone.';
  // Counted as the hosts count (lint.ts): code points, whitespace runs as one.
  const chars = hostChars(text);
  if (chars > DESCRIPTION_MAX_CHARS)
    return `At most ${DESCRIPTION_MAX_CHARS} characters (this one has ${chars}).`;
  return undefined;
}

/** The new file's text: front matter, a title, and a comment saying what goes below it. */
export function skillTemplate(name: string, description: string): string {
  const title = name.replace(/-/g, ' ').replace(/^./, (c) => c.toUpperCase());
  return [
    '---',
    stringify({ name, description }, { lineWidth: 0 }).trimEnd(),
    '---',
    '',
    `# ${title}`,
    '',
    '<!-- The instructions the agent follows once it has loaded this skill. -->',
    '',
  ].join('\n');
}
