/**
 * What each foreign eval shape's reading uses, so a field it does not use is named in a notice
 * (one per field name and file: the notices are a set, prefixed with the file by tasks.ts) instead
 * of disappearing. evalFormats.ts reads the fields; this says which ones it read.
 */

/** skill-creator's `evals[]` fields (references/schemas.md, eval_metadata.json) and the authoring guide's. */
export const SKILL_CREATOR_READ = [
  'id',
  'eval_id',
  'eval_name',
  'prompt',
  'query',
  'input',
  'expected_output',
  'files',
  'expectations',
  'assertions',
  'expected_behavior',
  'skills',
] as const;

/** The keys of a skill-creator `evals.json` besides its `evals` list. */
const SKILL_CREATOR_DOC_READ = new Set(['evals', 'skill_name']);

/** OpenAI evals samples: the chat (or text) input, the ideal answers, an id. */
export const OPENAI_EVALS_READ = ['id', 'input', 'ideal'] as const;

export const DESCRIPTION_NOTICE =
  'promptfoo test descriptions are not shown; tasks are named by id (test-N when none)';
export const METADATA_NOTICE =
  'promptfoo test "metadata" is not used: SkillOpt runs every test (no filtering by metadata) and names tasks by id';

/** A notice for every key of `rec` outside `read`, with why each is not used. */
export function noteUnread(
  rec: Record<string, unknown>,
  read: readonly string[],
  notices: Set<string>,
  notice: (key: string) => string,
): void {
  for (const key of Object.keys(rec)) if (!read.includes(key)) notices.add(notice(key));
}

/**
 * Which fields of a skill-creator eval name the task and hold its text, with a notice for every
 * field it does not use. eval_metadata.json names an eval by eval_id and eval_name: they name the
 * task when it has no id.
 */
export function skillCreatorKeys(
  rec: Record<string, unknown>,
  notices: Set<string>,
): { idKey?: string; inputKey?: string } {
  noteUnread(rec, SKILL_CREATOR_READ, notices, skillCreatorUnread);
  const idKey = firstGiven(rec, ['id', 'eval_id', 'eval_name']);
  const inputKey = firstGiven(rec, ['prompt', 'query', 'input']);
  for (const [key, why] of [
    ['eval_id', 'an eval with an id is named by it'],
    ['eval_name', 'an eval with an id or eval_id is named by it (one with neither by its eval_name)'],
    ['query', 'the task is the first of prompt, query, input'],
    ['input', 'the task is the first of prompt, query, input'],
  ] as const)
    if (rec[key] !== undefined && key !== idKey && key !== inputKey)
      notices.add(`skill-creator eval field "${key}" is not used: ${why}`);
  return { ...(idKey ? { idKey } : {}), ...(inputKey ? { inputKey } : {}) };
}

/** The first of `keys` the record gives a value (not null, not blank text). */
function firstGiven(rec: Record<string, unknown>, keys: readonly string[]): string | undefined {
  return keys.find((k) => {
    const v = rec[k];
    return v !== undefined && v !== null && !(typeof v === 'string' && v.trim() === '');
  });
}

function skillCreatorUnread(key: string): string {
  return `skill-creator eval field "${key}" is not used: an eval is read from ${SKILL_CREATOR_READ.join(', ')}; write what it checks as an expectation to have it graded`;
}

/** An expectation written as an object (`{text, passed, evidence}` as in skill-creator's grading.json). */
export function expectationUnread(key: string): string {
  return `skill-creator expectation field "${key}" is not used: the judge grades each expectation from its text alone`;
}

export function openAiEvalsUnread(key: string): string {
  return `OpenAI evals sample field "${key}" is not used: a sample is read from ${OPENAI_EVALS_READ.join(', ')} (put what the target must see into input, what it must answer into ideal)`;
}

/** Notices for the keys of a skill-creator `evals.json` besides `evals` and `skill_name`. */
export function skillCreatorDocNotices(whole: Record<string, unknown>, path: string): string[] {
  return Object.keys(whole)
    .filter((k) => !SKILL_CREATOR_DOC_READ.has(k))
    .map(
      (k) =>
        `${path}: skill-creator evals.json key "${k}" is not used: the file is read from skill_name and evals`,
    );
}

/**
 * A trigger query is read from its id, its text and `should_trigger`; its other fields (an expected
 * answer, expectations, a blank CSV cell aside) get one notice each, as the activation track only
 * checks whether the skill loads for the query.
 */
export function noteTriggerUnread(
  rec: Record<string, unknown>,
  read: readonly string[],
  notices: Set<string>,
): void {
  for (const [key, value] of Object.entries(rec)) {
    if (read.includes(key) || key === 'should_trigger') continue;
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value) && value.length === 0) continue;
    notices.add(
      `trigger query field "${key}" is not used: a trigger query is its id, its text and should_trigger, and only whether the skill loads for it is checked`,
    );
  }
}

/**
 * A plain task record is read from the first present field of each of `groups` (taskFiles.ts's
 * taskFieldNames) and `should_trigger`. Another name of a group that is also given is not used (the
 * first wins); a field of no group reaches only a scorer that gets the whole task (module, command).
 */
export function notePlainUnread(
  rec: Record<string, unknown>,
  groups: Readonly<Record<string, readonly string[]>>,
  notices: Set<string>,
  scorerSeesFields: boolean,
): void {
  const firstOf = new Map<string, string>();
  for (const names of Object.values(groups)) {
    const first = names.find((n) => given(rec[n]));
    for (const n of names) if (first) firstOf.set(n, first);
  }
  const grouped = new Set(Object.values(groups).flat());
  for (const [key, value] of Object.entries(rec)) {
    if (key === 'should_trigger' || !given(value)) continue;
    const first = firstOf.get(key);
    if (first !== undefined && first !== key) {
      const names = Object.values(groups).find((g) => g.includes(key)) ?? [];
      notices.add(
        `task field "${key}" is not used: "${first}" is, the first present of ${names.join(', ')} (remove the other, or rename it)`,
      );
    } else if (!grouped.has(key) && !scorerSeesFields) {
      notices.add(
        `task field "${key}" is not used: a task is read from its id, input, answers, task type, context, choices and images, and only a module or command env.scorer gets its other fields`,
      );
    }
  }
}

function given(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === 'string') return v.trim() !== '';
  return !(Array.isArray(v) && v.length === 0);
}
