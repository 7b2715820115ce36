/**
 * Writing a SKILL.md's `description` (the activation track's trained text): the front matter is
 * edited as YAML, other keys and the body stay as they are.
 */
import { parseDocument } from 'yaml';
import { parseFrontMatter } from './frontMatter';

/** `skill` with its front-matter description set to `description`; throws when it has no front matter. */
export function withDescription(skill: string, description: string): string {
  const fm = parseFrontMatter(skill);
  if (!fm || fm.errors.length) throw new Error('the skill has no readable front matter');
  const lines = skill.split('\n');
  const eol = lines[0]?.endsWith('\r') ? '\r\n' : '\n';
  const source = lines
    .slice(1, fm.endLine)
    .map((l) => l.replace(/\r$/, ''))
    .join('\n');
  const doc = parseDocument(source);
  doc.set('description', description);
  // Every line ends as the file's do: the lines are joined with `\n`, so each carries its `\r`.
  const front = doc
    .toString({ lineWidth: 0 })
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => (eol === '\r\n' ? `${l}\r` : l))
    .join('\n');
  return [lines[0], front, ...lines.slice(fm.endLine)].join('\n');
}

/**
 * `candidate` with the description of `current` put back when a body edit changed it: with the
 * activation track on, the description is trained on triggering only, never by a body step.
 */
export function keepDescription(current: string, candidate: string): string {
  const was = parseFrontMatter(current)?.description;
  const now = parseFrontMatter(candidate);
  if (was === undefined || !now || now.errors.length || now.description === was) return candidate;
  return withDescription(candidate, was);
}
