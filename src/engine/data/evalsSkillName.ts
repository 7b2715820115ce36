/**
 * skill-creator's `evals/evals.json` names the skill it tests (`skill_name`, "matching the skill's
 * frontmatter"). Evals of another skill, named by mistake, would train this one on the wrong tasks:
 * the run says so before anything is spent.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { parseFrontMatter } from '../skill/frontMatter';

/** A notice when the evals file's `skill_name` is not the trained skill's name (front matter, else folder). */
export function evalsSkillNameNotices(dataPath: string, skill: { path: string; text: string }): string[] {
  if (!/\.json$/i.test(dataPath)) return [];
  let whole: unknown;
  try {
    whole = JSON.parse(readFileSync(dataPath, 'utf8').replace(/^\uFEFF/, ''));
  } catch {
    return []; // the task loader has already read it; anything wrong with it was said there
  }
  if (typeof whole !== 'object' || whole === null || Array.isArray(whole)) return [];
  const { evals, skill_name: evalsFor } = whole as Record<string, unknown>;
  if (!Array.isArray(evals) || typeof evalsFor !== 'string' || !evalsFor.trim()) return [];
  const name = parseFrontMatter(skill.text)?.name?.trim() || basename(dirname(skill.path));
  if (evalsFor.trim() === name) return [];
  return [
    `${dataPath}: these skill-creator evals are for skill "${evalsFor}" (skill_name), but the skill trained is "${name}" (${skill.path}). Fix: point env.data_path at this skill's evals/evals.json, or set skill_name to "${name}" if they are its evals`,
  ];
}
