/**
 * The user's own eval records, read as they are written by other tools, so they need no conversion:
 * skill-creator (`evals/evals.json`: id, prompt, expected_output, files, expectations; and the
 * authoring guide's query, expected_behavior, files, skills, read the same way), promptfoo
 * tests (`vars` + `assert`, in YAML, JSON or JSONL; its CSV form with `__expected` columns) and
 * OpenAI evals samples (`input` messages + `ideal`). Each becomes our fields (id, input, answers)
 * plus compiled assertions and input files; anything we cannot honour is refused here, at load time.
 */
import { SkillOptError, type ErrorPlace } from '../errors';
import {
  compileAssertion,
  judgeAssertion,
  parseCsvAssertion,
  type Assertion,
  type AssertionPlace,
} from '../scoring/assertions';
import { isRecord } from './taskFiles';

export type EvalFormat = 'skill-creator' | 'promptfoo' | 'promptfoo-csv' | 'openai-evals';

/** What a promptfoo config gives every test: its one prompt template and `defaultTest`. */
export interface EvalDefaults {
  prompt?: string;
  vars?: Record<string, unknown>;
  assert?: unknown[];
}

export interface EvalRecord {
  format: EvalFormat;
  /** The fields tasks.ts reads, in our names (id, input, answers, context). */
  fields: Record<string, unknown>;
  assertions: Assertion[];
  /** Input files as written (skill-creator `files`), resolved by tasks.ts. */
  files: string[];
  /** Task passes when the weighted share of passed assertions reaches this (promptfoo `threshold`); default all. */
  threshold?: number;
}

/** Field names that hold the task text among promptfoo vars, first present wins. */
const INPUT_VARS = ['prompt', 'question', 'input', 'query', 'task', 'instruction'];
const PROMPTFOO_TEST_KEYS = new Set(['vars', 'assert', 'description', 'metadata', 'threshold', 'id']);

/** Which foreign format a record is in, or undefined for our own task records. */
export function evalFormatOf(rec: Record<string, unknown>): EvalFormat | undefined {
  if (Object.keys(rec).some((k) => k.startsWith('__expected'))) return 'promptfoo-csv';
  if (isRecord(rec.vars) || Array.isArray(rec.assert)) return 'promptfoo';
  // `expected_behavior` (with `query`, `skills`, `files`): the evaluation shape of Anthropic's skill
  // authoring guide, the same idea as skill-creator's expectations.
  if ('expectations' in rec || 'assertions' in rec || 'expected_behavior' in rec) return 'skill-creator';
  // A trigger query (`should_trigger`) belongs to the activation track, not to this reading.
  if (typeof rec.prompt === 'string' && typeof rec.expected_output === 'string' && !('should_trigger' in rec))
    return 'skill-creator';
  if ('ideal' in rec || Array.isArray(rec.input)) return 'openai-evals';
  return undefined;
}

export function readEvalRecord(
  rec: Record<string, unknown>,
  index: number,
  place: ErrorPlace,
  notices: Set<string>,
  defaults?: EvalDefaults,
): EvalRecord | undefined {
  const format = evalFormatOf(rec);
  const at = (key: string): AssertionPlace => ({ place, key, notices });
  switch (format) {
    case undefined:
      return undefined;
    case 'skill-creator':
      return skillCreator(rec, at, notices);
    case 'promptfoo':
      return promptfoo(rec, index, place, at, notices, defaults);
    case 'promptfoo-csv':
      return promptfooCsv(rec, index, place, at, defaults);
    case 'openai-evals':
      return openAiEvals(rec, index, place);
  }
}

function fail(place: ErrorPlace, problem: string, fix: string, key?: string): never {
  throw new SkillOptError('tasks', problem, {
    ...place,
    ...(key ? { key: place.key ? `${place.key}.${key}` : key } : {}),
    fix,
  });
}

function skillCreator(
  rec: Record<string, unknown>,
  at: (key: string) => AssertionPlace,
  notices: Set<string>,
): EvalRecord {
  const assertions: Assertion[] = [];
  for (const name of ['expectations', 'assertions', 'expected_behavior'] as const) {
    const list = rec[name];
    if (list === undefined) continue;
    if (!Array.isArray(list))
      fail(at(name).place, `"${name}" must be a list`, 'write it as a list of sentences', name);
    list.forEach((entry, i) => {
      const where = at(`${name}[${i}]`);
      // Some skill-creator variants write {text: …}; a typed object is a promptfoo-style assertion.
      if (isRecord(entry) && typeof entry.type === 'string') assertions.push(compileAssertion(entry, where));
      else
        assertions.push(judgeAssertion(isRecord(entry) ? (entry.text ?? entry.description) : entry, where));
    });
  }
  const expected = typeof rec.expected_output === 'string' ? rec.expected_output.trim() : '';
  if (assertions.length === 0 && expected) {
    assertions.push(
      judgeAssertion(`The output achieves what this describes: ${expected}`, at('expected_output')),
    );
  }
  const files = rec.files ?? [];
  if (!Array.isArray(files) || !files.every((f) => typeof f === 'string' && f.trim() !== '')) {
    fail(
      at('files').place,
      '"files" must be a list of paths',
      'write the input files as paths relative to the skill folder',
      'files',
    );
  }
  if (rec.skills !== undefined) {
    const names = (Array.isArray(rec.skills) ? (rec.skills as unknown[]) : [rec.skills])
      .map((n) => (typeof n === 'string' ? n : JSON.stringify(n)))
      .join(', ');
    notices.add(
      `an eval's "skills" (${names}) is not read: every task runs with the one skill this run trains`,
    );
  }
  return {
    format: 'skill-creator',
    fields: {
      id: rec.id,
      input: rec.prompt ?? rec.query ?? rec.input,
      ...(expected ? { answers: [expected] } : {}),
    },
    assertions,
    files: files as string[],
  };
}

function promptfoo(
  rec: Record<string, unknown>,
  index: number,
  place: ErrorPlace,
  at: (key: string) => AssertionPlace,
  notices: Set<string>,
  defaults?: EvalDefaults,
): EvalRecord {
  for (const key of Object.keys(rec)) {
    if (PROMPTFOO_TEST_KEYS.has(key)) continue;
    const why: Record<string, string> = {
      options: 'its transforms and providers run code or other models; check the output as it is',
      provider: 'the target model is model.target for every task',
      providerOutput: "SkillOpt trains on the target's own replies",
      prompts: 'SkillOpt trains one prompt (the skill) against every test',
      providers: 'SkillOpt runs every test on model.target',
    };
    fail(
      place,
      `promptfoo test sets "${key}", which SkillOpt does not honour`,
      `remove "${key}"${why[key] ? `: ${why[key]}` : ` (a test takes ${[...PROMPTFOO_TEST_KEYS].join(', ')})`}`,
      key,
    );
  }
  const vars = { ...(defaults?.vars ?? {}), ...(isRecord(rec.vars) ? rec.vars : {}) };
  const rawAsserts = [...(defaults?.assert ?? []).map((a, i) => ({ a, key: `defaultTest.assert[${i}]` }))];
  if (rec.assert !== undefined) {
    if (!Array.isArray(rec.assert))
      fail(place, '"assert" must be a list', 'write assert: [{type: contains, value: …}]', 'assert');
    rec.assert.forEach((a, i) => rawAsserts.push({ a, key: `assert[${i}]` }));
  }
  const threshold = rec.threshold;
  if (threshold !== undefined && (typeof threshold !== 'number' || threshold < 0 || threshold > 1)) {
    fail(place, `"threshold" is ${JSON.stringify(threshold)}`, 'use a number between 0 and 1', 'threshold');
  }
  if (rec.description !== undefined)
    notices.add('promptfoo test descriptions are not shown; tasks are named by id (test-N when none)');
  return {
    format: 'promptfoo',
    fields: {
      id: rec.id ?? vars.id ?? `test-${index + 1}`,
      input: promptfooInput(vars, place, defaults?.prompt),
    },
    assertions: rawAsserts.map(({ a, key }) => compileAssertion(a, at(key))),
    files: [],
    ...(typeof threshold === 'number' ? { threshold } : {}),
  };
}

function promptfooCsv(
  rec: Record<string, unknown>,
  index: number,
  place: ErrorPlace,
  at: (key: string) => AssertionPlace,
  defaults?: EvalDefaults,
): EvalRecord {
  const vars: Record<string, unknown> = {};
  const assertions: Assertion[] = [];
  let threshold: number | undefined;
  for (const [key, value] of Object.entries(rec)) {
    if (!key.startsWith('__')) {
      vars[key] = value;
      continue;
    }
    if (/^__expected\d*$/.test(key)) {
      if (typeof value === 'string' && value.trim() !== '')
        assertions.push(parseCsvAssertion(value, at(key)));
      continue;
    }
    if (key === '__description') continue;
    if (key === '__threshold' && typeof value === 'string' && value.trim() !== '') {
      const t = Number(value);
      if (!(t >= 0 && t <= 1)) fail(place, `__threshold is "${value}"`, 'use a number between 0 and 1', key);
      threshold = t;
      continue;
    }
    if (key === '__threshold') continue;
    fail(
      place,
      `promptfoo column "${key}" is not supported`,
      `remove the column (SkillOpt reads the vars, __expected…, __threshold and __description)`,
      key,
    );
  }
  return {
    format: 'promptfoo-csv',
    fields: { id: vars.id ?? `row-${index + 1}`, input: promptfooInput(vars, place, defaults?.prompt) },
    assertions,
    files: [],
    ...(threshold !== undefined ? { threshold } : {}),
  };
}

/** The task text: the config's one prompt template with the vars filled in, or the input var itself. */
function promptfooInput(vars: Record<string, unknown>, place: ErrorPlace, template?: string): string {
  for (const [name, value] of Object.entries(vars)) {
    if (typeof value === 'string' && value.startsWith('file://')) {
      fail(
        place,
        `var "${name}" reads ${value}`,
        'write the value inline (SkillOpt does not load var files)',
        `vars.${name}`,
      );
    }
    if (value !== null && typeof value === 'object') {
      fail(
        place,
        `var "${name}" is ${Array.isArray(value) ? 'a list' : 'an object'}`,
        Array.isArray(value)
          ? 'write one test per value (promptfoo expands lists into several tests)'
          : 'write the value as text',
        `vars.${name}`,
      );
    }
  }
  if (template !== undefined) {
    return template.replace(/\{\{\s*([^}]*?)\s*\}\}/g, (_, name: string) => {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
        fail(
          place,
          `the prompt uses "{{ ${name} }}", a template expression SkillOpt does not evaluate`,
          'use plain {{ var }} placeholders',
        );
      }
      if (!(name in vars))
        fail(
          place,
          `the prompt uses {{ ${name} }} but the test has no var "${name}"`,
          `add vars.${name}`,
          'vars',
        );
      return String(vars[name]);
    });
  }
  const name = INPUT_VARS.find((n) => typeof vars[n] === 'string' && vars[n] !== '');
  const scalars = Object.keys(vars).filter((k) => k !== 'id' && vars[k] !== undefined && vars[k] !== null);
  const only = scalars.length === 1 ? scalars[0] : undefined;
  const chosen = name ?? only;
  if (chosen === undefined) {
    fail(
      place,
      `cannot tell which var is the task (${scalars.join(', ') || 'no vars'})`,
      `name it one of ${INPUT_VARS.join(', ')}, or give the config one prompt with {{ var }} placeholders`,
      'vars',
    );
  }
  return String(vars[chosen]);
}

function openAiEvals(rec: Record<string, unknown>, index: number, place: ErrorPlace): EvalRecord {
  let input: unknown = rec.input;
  let context: string | undefined;
  if (Array.isArray(rec.input)) {
    const system: string[] = [];
    const user: string[] = [];
    rec.input.forEach((m, i) => {
      if (!isRecord(m) || typeof m.content !== 'string') {
        fail(
          place,
          `input[${i}] is not a chat message`,
          'write each message as {"role": …, "content": "…"}',
          'input',
        );
      }
      if (m.role === 'system') system.push(m.content);
      else if (m.role === 'user') user.push(m.content);
      else
        fail(
          place,
          `input[${i}] is a "${String(m.role)}" message: a task is one user turn here`,
          'put worked examples into the skill or into the one user message',
          'input',
        );
    });
    if (user.length !== 1) {
      fail(
        place,
        `input has ${user.length} user messages`,
        'give each sample exactly one user message (the target answers in one turn)',
        'input',
      );
    }
    input = user[0];
    // The skill is the target's system prompt; a sample's own system text travels as the task's context.
    if (system.length) context = system.join('\n\n');
  }
  return {
    format: 'openai-evals',
    fields: {
      id: rec.id ?? `sample-${index + 1}`,
      input,
      answers: rec.ideal,
      ...(context !== undefined ? { context } : {}),
    },
    assertions: [],
    files: [],
  };
}
