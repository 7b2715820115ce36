/**
 * Eval files as whole documents: skill-creator's `{skill_name, evals: [...]}` and a promptfoo config
 * (`prompts`, `defaultTest`, `tests`, in YAML or JSON). YAML task files are read here too, keeping
 * the line of every record for error messages.
 */
import { LineCounter, isMap, isSeq, parseDocument, type Node } from 'yaml';
import { SkillOptError } from '../errors';
import { ALIAS_BOMB, yamlValue } from '../yamlValue';
import type { EvalDefaults } from './evalFormats';
import { skillCreatorDocNotices } from './evalUnread';
import { isRecord } from './taskFiles';

export interface EvalContainer {
  /** The key the records sit under (`evals`, `tests`). */
  name: string;
  list: unknown[];
  defaults?: EvalDefaults;
  notices: string[];
}

/** Keys of a promptfoo config that matter to its tests, or that are only about how promptfoo runs. */
const PROMPTFOO_READ = new Set(['tests', 'prompts', 'defaultTest', 'description']);
const PROMPTFOO_NOTED: Record<string, string> = {
  providers: 'the models are model.target and model.optimizer',
  outputPath: 'results go to the run folder',
  sharing: 'nothing is shared',
  evaluateOptions: 'concurrency and retries are set under limits',
  env: 'keys come from the environment or the editor',
};

/** The eval records of a whole-document file, or undefined when it is not one of these formats. */
export function evalContainer(whole: Record<string, unknown>, path: string): EvalContainer | undefined {
  if (Array.isArray(whole.evals)) {
    const name = typeof whole.skill_name === 'string' ? ` for skill "${whole.skill_name}"` : '';
    return {
      name: 'evals',
      list: whole.evals,
      notices: [
        `${path}: skill-creator evals${name}, ${whole.evals.length} read as tasks`,
        ...skillCreatorDocNotices(whole, path),
      ],
    };
  }
  if (!('tests' in whole)) return undefined;
  const refuse: Refuse = refuser(path);
  if (!Array.isArray(whole.tests)) {
    refuse(
      'tests',
      'promptfoo "tests" is not a list of tests',
      typeof whole.tests === 'string'
        ? `point env.data_path at the tests file itself (${whole.tests.replace(/^file:\/\//, '')})`
        : 'write tests: as a list',
    );
  }
  const notices: string[] = [];
  for (const key of Object.keys(whole)) {
    if (PROMPTFOO_READ.has(key)) continue;
    const noted = PROMPTFOO_NOTED[key];
    if (noted) notices.push(`${path}: promptfoo "${key}" is not used here: ${noted}`);
    else
      refuse(
        key,
        `promptfoo config key "${key}" is not supported`,
        `remove it; SkillOpt reads ${[...PROMPTFOO_READ].join(', ')} (and notes ${Object.keys(PROMPTFOO_NOTED).join(', ')})`,
      );
  }
  const defaults: EvalDefaults = {};
  const prompt = onePrompt(whole.prompts, refuse);
  if (prompt !== undefined) defaults.prompt = prompt;
  const dt = whole.defaultTest;
  if (dt !== undefined) {
    if (!isRecord(dt))
      refuse('defaultTest', 'defaultTest is not a mapping', 'write defaultTest: {vars: …, assert: [...]}');
    for (const key of Object.keys(dt)) {
      if (key !== 'vars' && key !== 'assert')
        refuse(
          `defaultTest.${key}`,
          `defaultTest.${key} is not supported`,
          'defaultTest may set vars and assert',
        );
    }
    if (dt.vars !== undefined) {
      if (!isRecord(dt.vars))
        refuse('defaultTest.vars', 'defaultTest.vars is not a mapping', 'write vars: {name: value}');
      defaults.vars = dt.vars;
    }
    if (dt.assert !== undefined) {
      if (!Array.isArray(dt.assert))
        refuse('defaultTest.assert', 'defaultTest.assert is not a list', 'write assert: [{type: …}]');
      defaults.assert = dt.assert;
    }
  }
  return { name: 'tests', list: whole.tests, defaults, notices };
}

type Refuse = (key: string, problem: string, fix: string) => never;

function refuser(path: string): Refuse {
  return (key, problem, fix) => {
    throw new SkillOptError('tasks', problem, { file: path, key, fix });
  };
}

function onePrompt(prompts: unknown, refuse: Refuse): string | undefined {
  if (prompts === undefined) return undefined;
  const list = Array.isArray(prompts) ? prompts : [prompts];
  if (list.length !== 1) {
    refuse(
      'prompts',
      `the config has ${list.length} prompts`,
      'keep one prompt: SkillOpt trains the skill against one task template (the skill is the system prompt)',
    );
  }
  const first: unknown = list[0];
  const p = isRecord(first) ? first.raw : first;
  if (typeof p !== 'string' || p.trim() === '')
    refuse(
      'prompts',
      'the prompt is not text',
      'write the prompt template as a string with {{ var }} placeholders',
    );
  if (p.startsWith('file://')) refuse('prompts', `the prompt is read from ${p}`, 'write the template inline');
  if (/\{%/.test(p))
    refuse('prompts', 'the prompt uses Nunjucks tags ({% … %})', 'use plain {{ var }} placeholders');
  return p;
}

/** A parsed YAML task file: its value, and the 1-based line where each element of a top-level list starts. */
export function readYaml(
  path: string,
  text: string,
): { value: unknown; lineOf: (listKey: string | undefined, i: number) => number | undefined } {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter });
  const error = doc.errors[0];
  if (error) {
    const line = error.linePos?.[0].line;
    throw new SkillOptError('tasks', `Task file is not valid YAML: ${error.message.split('\n')[0]}`, {
      file: path,
      ...(line ? { line } : {}),
      fix: 'fix the YAML there (a list of tasks, or a promptfoo config with tests:)',
    });
  }
  const root = doc.contents;
  const lineOf = (listKey: string | undefined, i: number): number | undefined => {
    const seq: Node | null | undefined =
      listKey === undefined ? root : isMap(root) ? root.get(listKey, true) : undefined;
    if (!isSeq(seq)) return undefined;
    const item = seq.items[i] as Node | undefined;
    return item?.range ? counter.linePos(item.range[0]).line : undefined;
  };
  const parsed = yamlValue(doc);
  if (!parsed)
    throw new SkillOptError('tasks', `Task file: ${ALIAS_BOMB.problem}`, { file: path, fix: ALIAS_BOMB.fix });
  return { value: parsed.value, lineOf };
}
