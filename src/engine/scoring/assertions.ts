/**
 * Assertions carried by the user's own eval files (promptfoo `assert`, skill-creator `expectations`,
 * promptfoo CSV `__expected`): each is compiled when the tasks are loaded into a deterministic check
 * or a natural-language expectation for the judge model, or refused there, before anything is spent,
 * naming the file, the record and the assertion with what to use instead.
 */
import { isDeepStrictEqual } from 'node:util';
import { SkillOptError, type ErrorPlace } from '../errors';
import { extractJson } from '../llm/json';
import { isRecord } from '../data/taskFiles';

export const CHECK_TYPES = [
  'equals',
  'contains',
  'icontains',
  'contains-any',
  'contains-all',
  'icontains-any',
  'icontains-all',
  'starts-with',
  'regex',
  'is-json',
  'contains-json',
] as const;
export type CheckType = (typeof CHECK_TYPES)[number];

/** promptfoo's model-graded types we grade with the judge (pass/fail per expectation). */
export const JUDGE_TYPES = ['llm-rubric', 'model-graded-closedqa'] as const;

export type Assertion =
  | { kind: 'check'; type: CheckType; negate: boolean; value: unknown; weight: number; label: string }
  | { kind: 'judge'; rubric: string; weight: number; label: string };

/** Where an assertion was written, for refusals: the record's place plus the assertion's own key. */
export interface AssertionPlace {
  place: ErrorPlace;
  /** e.g. `assert[2]`, `expectations[0]`, `__expected1`. */
  key: string;
  /** One-line notices (mapped options) collected for the run's warnings. */
  notices?: Set<string>;
}

/** Why each refused family cannot run here, and what to use instead. */
const REFUSED: Array<{ types: readonly string[]; why: string; fix: string }> = [
  {
    types: ['javascript', 'python', 'webhook', 'ruby'],
    why: 'it runs code from the eval file, which SkillOpt does not execute',
    fix: 'move the check into a scorer module or command (env.scorer {type: module, path: …} or {type: command, …}), or express it as an llm-rubric',
  },
  {
    types: [
      'similar',
      'levenshtein',
      'rouge-n',
      'bleu',
      'gleu',
      'meteor',
      'perplexity',
      'perplexity-score',
      'classifier',
      'moderation',
      'answer-relevance',
      'context-faithfulness',
      'context-recall',
      'context-relevance',
      'factuality',
      'g-eval',
      'select-best',
      'max-score',
      'human',
      'pi',
    ],
    why: 'it needs a metric, an embedding or a grader SkillOpt does not have',
    fix: 'use an llm-rubric that states what the output must do, a deterministic assertion (contains, regex, equals…), or env.scorer with your own module',
  },
  {
    types: ['cost', 'latency', 'trace-span-count', 'trace-span-duration', 'trace-error-spans'],
    why: 'it measures the call, not the answer, and SkillOpt trains on answers',
    fix: 'remove it (limits.max_dollars and limits.request_timeout_s bound cost and time)',
  },
  {
    types: [
      'is-valid-openai-tools-call',
      'is-valid-openai-function-call',
      'is-valid-function-call',
      'is-xml',
      'contains-xml',
      'is-sql',
      'contains-sql',
      'is-html',
      'contains-html',
      'is-refusal',
      'finish-reason',
      'assert-set',
    ],
    why: 'SkillOpt has no scorer for it',
    fix: `use one of ${[...CHECK_TYPES, ...JUDGE_TYPES].join(', ')} (each may start with not- except the rubrics), or env.scorer with your own module`,
  },
];

const ASSERT_KEYS = new Set(['type', 'value', 'weight', 'threshold', 'metric']);
const REFUSED_KEYS: Record<string, string> = {
  provider: 'the judge is evaluation.judge_model for every expectation; set it there',
  rubricPrompt: "the judge uses SkillOpt's own grading prompt; put what matters into the rubric text",
  transform: 'it runs code on the output; check the output as it is, or use a scorer module',
  contextTransform: 'it runs code; use a scorer module',
  config: 'the assertion types SkillOpt maps take no config',
};

function refuse(at: AssertionPlace, problem: string, fix: string): never {
  const key = at.place.key ? `${at.place.key}.${at.key}` : at.key;
  throw new SkillOptError('tasks', problem, { ...at.place, key, fix });
}

/** A natural-language expectation (skill-creator `expectations`, a plain-text rubric). */
export function judgeAssertion(text: unknown, at: AssertionPlace): Assertion {
  if (typeof text !== 'string' || text.trim() === '') {
    refuse(
      at,
      'An expectation must be a non-empty sentence',
      'write each expectation as a string, e.g. "The output names the capital"',
    );
  }
  return {
    kind: 'judge',
    rubric: text.trim(),
    weight: 1,
    label: `expectation ${JSON.stringify(short(text.trim()))}`,
  };
}

/** A promptfoo-style `{type, value, …}` object (or its CSV string form, parsed by the caller). */
export function compileAssertion(raw: unknown, at: AssertionPlace): Assertion {
  if (!isRecord(raw) || typeof raw.type !== 'string' || raw.type.trim() === '') {
    refuse(at, 'An assertion must be an object with a "type"', 'write it as {type: contains, value: "…"}');
  }
  const type = raw.type.trim();
  for (const key of Object.keys(raw)) {
    if (ASSERT_KEYS.has(key)) continue;
    const why = REFUSED_KEYS[key];
    if (why)
      refuse(
        at,
        `Assertion "${type}" sets "${key}", which SkillOpt does not honour`,
        `remove "${key}": ${why}`,
      );
    refuse(
      at,
      `Assertion "${type}" has an unknown key "${key}"`,
      `an assertion takes ${[...ASSERT_KEYS].join(', ')}`,
    );
  }
  const weight = raw.weight ?? 1;
  if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) {
    refuse(at, `Assertion "${type}" has weight ${JSON.stringify(weight)}`, 'use a number ≥ 0');
  }
  if (raw.metric !== undefined) {
    at.notices?.add(
      'assertion "metric" names are kept in the eval file only: each task is scored as the weighted share of its assertions',
    );
  }
  if (typeof raw.value === 'string' && raw.value.startsWith('file://')) {
    refuse(at, `Assertion "${type}" reads its value from ${raw.value}`, 'write the value inline');
  }
  const negate = type.startsWith('not-');
  const base = negate ? type.slice(4) : type;

  if ((JUDGE_TYPES as readonly string[]).includes(base)) {
    if (negate)
      refuse(
        at,
        `"${type}" is not supported`,
        `state the rubric positively (e.g. "The output does not …") as ${base}`,
      );
    if (typeof raw.value !== 'string' || raw.value.trim() === '') {
      refuse(at, `Assertion "${type}" needs its rubric as a string value`, 'write value: "The output …"');
    }
    if (raw.threshold !== undefined) {
      at.notices?.add(
        `${base} "threshold" is read as pass/fail: the judge grades each expectation passed or not`,
      );
    }
    return {
      kind: 'judge',
      rubric: raw.value.trim(),
      weight,
      label: `${base} ${JSON.stringify(short(raw.value.trim()))}`,
    };
  }
  if (!(CHECK_TYPES as readonly string[]).includes(base)) {
    const family = REFUSED.find((f) => f.types.includes(base));
    if (family) refuse(at, `Assertion "${type}" cannot be scored: ${family.why}`, family.fix);
    refuse(
      at,
      `Unknown assertion type "${type}"`,
      `use one of ${[...CHECK_TYPES, ...JUDGE_TYPES].join(', ')} (each check may start with not-)`,
    );
  }
  if (raw.threshold !== undefined) {
    refuse(at, `Assertion "${type}" sets a threshold, but it passes or fails outright`, 'remove threshold');
  }
  const value = checkValue(base as CheckType, raw.value, type, at);
  return {
    kind: 'check',
    type: base as CheckType,
    negate,
    value,
    weight,
    label: `${type}${describeValue(value)}`,
  };
}

function checkValue(type: CheckType, value: unknown, shown: string, at: AssertionPlace): unknown {
  switch (type) {
    case 'is-json':
    case 'contains-json':
      if (value !== undefined && value !== null) {
        refuse(
          at,
          `Assertion "${shown}" validates against a JSON schema, which SkillOpt does not check`,
          `remove the value (then any JSON passes), or use env.scorer with a module that validates the schema`,
        );
      }
      return undefined;
    case 'equals':
      if (value === undefined || value === null)
        refuse(at, `Assertion "${shown}" needs a value`, 'write the expected output as value');
      return typeof value === 'number' || typeof value === 'boolean' ? String(value) : value;
    case 'contains-any':
    case 'contains-all':
    case 'icontains-any':
    case 'icontains-all': {
      const list: unknown[] | undefined = Array.isArray(value)
        ? (value as unknown[])
        : typeof value === 'string'
          ? value.split(',')
          : undefined;
      const strings = list
        ?.map((v) => (typeof v === 'number' ? String(v) : v))
        .filter((v): v is string => typeof v === 'string' && v.trim() !== '');
      if (!strings || strings.length === 0 || strings.length !== list?.length) {
        refuse(
          at,
          `Assertion "${shown}" needs a list of strings as value`,
          'write value: ["a", "b"] (or "a,b")',
        );
      }
      return list.length === strings.length ? strings.map((s) => s.trim()) : strings;
    }
    case 'regex': {
      if (typeof value !== 'string' || value === '')
        refuse(at, `Assertion "${shown}" needs a pattern as value`, 'write value: "^\\\\d+$"');
      try {
        new RegExp(value);
      } catch (err) {
        refuse(
          at,
          `Assertion "${shown}" has an invalid pattern: ${(err as Error).message}`,
          'fix the regular expression (JavaScript syntax)',
        );
      }
      return value;
    }
    default: {
      const text = typeof value === 'number' ? String(value) : value;
      if (typeof text !== 'string' || text === '')
        refuse(at, `Assertion "${shown}" needs a string value`, 'write the text to look for as value');
      return text;
    }
  }
}

/** Run one deterministic check on the final answer. */
export function runCheck(a: Extract<Assertion, { kind: 'check' }>, output: string): boolean {
  const pass = check(a.type, a.value, output);
  return a.negate ? !pass : pass;
}

function check(type: CheckType, value: unknown, output: string): boolean {
  const lower = output.toLowerCase();
  switch (type) {
    case 'equals':
      if (typeof value === 'string') return output.trim() === value.trim();
      return isDeepStrictEqual(parseJson(output), value);
    case 'contains':
      return output.includes(value as string);
    case 'icontains':
      return lower.includes((value as string).toLowerCase());
    case 'contains-any':
      return (value as string[]).some((v) => output.includes(v));
    case 'contains-all':
      return (value as string[]).every((v) => output.includes(v));
    case 'icontains-any':
      return (value as string[]).some((v) => lower.includes(v.toLowerCase()));
    case 'icontains-all':
      return (value as string[]).every((v) => lower.includes(v.toLowerCase()));
    case 'starts-with':
      return output.trimStart().startsWith(value as string);
    case 'regex':
      return new RegExp(value as string).test(output);
    case 'is-json':
      return parseJson(output) !== undefined;
    case 'contains-json':
      return extractJson(output).ok || parseJson(output) !== undefined;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text.trim()) as unknown;
  } catch {
    return undefined;
  }
}

function short(text: string): string {
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

function describeValue(value: unknown): string {
  if (value === undefined) return '';
  return ` ${short(typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value))}`;
}

/**
 * promptfoo's CSV form of an assertion (`__expected` cells): `contains: text`, `regex: …`, `is-json`,
 * `grade: rubric` / `llm-rubric: rubric`, `fn:` / `javascript:` / `python:` (refused), or plain text
 * meaning equals.
 */
export function parseCsvAssertion(cell: string, at: AssertionPlace): Assertion {
  const m = /^\s*([a-z][a-z-]*)\s*:(.*)$/s.exec(cell);
  if (m) {
    const [, prefix, rest] = m;
    const value = rest.trim();
    if (prefix === 'grade') return compileAssertion({ type: 'llm-rubric', value }, at);
    if (prefix === 'fn' || prefix === 'eval') return compileAssertion({ type: 'javascript', value }, at);
    const base = prefix.startsWith('not-') ? prefix.slice(4) : prefix;
    const known = [...CHECK_TYPES, ...JUDGE_TYPES, ...REFUSED.flatMap((f) => f.types)] as string[];
    if (known.includes(base))
      return compileAssertion({ type: prefix, ...(value !== '' ? { value } : {}) }, at);
  }
  const bare = cell.trim();
  if (bare === 'is-json' || bare === 'contains-json' || bare === 'not-is-json')
    return compileAssertion({ type: bare }, at);
  return compileAssertion({ type: 'equals', value: cell }, at);
}
