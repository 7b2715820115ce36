/**
 * What the agent hosts need of a trained SKILL.md's front matter survives every optimizer step: the
 * `name` (the folder the skill is installed in; VS Code and Copilot skip a skill whose name is not its
 * folder's) and a readable block with a non-empty description of at most 1,024 characters (Codex
 * skips a longer one). A chat target cannot see these, so its gate would let such an edit through
 * and the best skill would then fail to load in every agent.
 */
import { parseFrontMatter } from './frontMatter';
import { DESCRIPTION_MAX_CHARS, hostChars } from './lint';

/** Status of an edit undone because it broke the front matter (`error` says how). */
export const FRONT_MATTER_STATUS = 'skipped_front_matter';

/** Why `next` breaks what the hosts read in `previous`'s front matter; undefined when it does not. */
export function frontMatterBreak(previous: string, next: string): string | undefined {
  const was = parseFrontMatter(previous);
  // A bare skill (the reference's format) or an already unreadable block has nothing to keep.
  if (!was || was.errors.length) return undefined;
  const now = parseFrontMatter(next);
  if (!now || now.errors.length)
    return 'it removes or breaks the SKILL.md front matter, so no agent would load the skill';
  if (was.name !== undefined && now.name !== was.name)
    return `it changes the front-matter name ${JSON.stringify(was.name)}, which must stay the skill's folder name (VS Code and Copilot skip a skill whose name is not its folder's)`;
  const described = (fm: typeof was): boolean => Boolean(fm.description?.trim());
  if (described(was) && !described(now))
    return 'it removes the front-matter description, from which an agent decides to load the skill';
  const chars = hostChars(now.description ?? '');
  // One already over the limit (a chat target trains it with a notice) may still be shortened.
  if (
    now.description !== was.description &&
    chars > DESCRIPTION_MAX_CHARS &&
    chars >= hostChars(was.description ?? '')
  )
    return `it makes the front-matter description ${chars} characters, over the hosts' ${DESCRIPTION_MAX_CHARS} (Codex skips the skill)`;
  return undefined;
}

/**
 * `next` (a whole-skill rewrite) with the front matter of `previous` put back when the rewrite broke
 * it (frontMatterBreak), and the reason; the rewrite's body is kept.
 */
export function keepFrontMatter(previous: string, next: string): { text: string; restored?: string } {
  const reason = frontMatterBreak(previous, next);
  if (!reason) return { text: next };
  const front = previous.split('\n').slice(0, parseFrontMatter(previous)!.endLine + 1);
  const now = parseFrontMatter(next);
  const body = next.split('\n').slice(now ? now.endLine + 1 : 0);
  return { text: [...front, ...body].join('\n'), restored: reason };
}
