import { keysSet } from '../idleKeys';
import { dependentKeyWarnings } from './dependentKeys';
import { dispositionOf } from './disposition';
import { ALIASED_KEYS, normalizeAlias } from './enums';
import { configSchema, describeExpected, fieldSchema, isSectionName } from './index';
import type { SkillOptConfig } from './index';
import { suggestKey } from './problems';
import type { ConfigOrigin, ConfigProblem, ConfigWarning } from './problems';
import { envFields, optimizerFields } from './sections';

/** Validation: the one pass that turns a sectioned config object into a config, or problems. */

export interface ValidateOptions {
  /** Where a dotted path was set; problems and warnings carry its file and line. */
  locate?: (path: readonly PropertyKey[]) => ConfigOrigin | undefined;
  /** File named by problems whose key has no recorded origin (a default value). */
  defaultFile?: string;
  /** Flat (config.json) name → dotted structured key, used for "did you mean" hints. */
  flatNames?: ReadonlyMap<string, string>;
}

export type ValidationResult =
  | { ok: true; config: SkillOptConfig; warnings: ConfigWarning[] }
  | { ok: false; problems: ConfigProblem[]; warnings: ConfigWarning[] };

type Dict = Record<string, unknown>;

export function isPlainObject(v: unknown): v is Dict {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null (empty)';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return JSON.stringify(v);
}

function getPath(root: unknown, path: readonly PropertyKey[]): unknown {
  let node = root;
  for (const p of path) {
    if (!isPlainObject(node) && !Array.isArray(node)) return undefined;
    node = (node as Record<PropertyKey, unknown>)[p];
  }
  return node;
}

/**
 * Validate a structured (sectioned) config object: unknown keys become warnings, aliases are
 * normalised, then every wrong type or impossible value is collected as a problem. Nothing
 * throws; loadConfig turns problems into one SkillOptError.
 */
export function validateConfigObject(raw: unknown, options: ValidateOptions = {}): ValidationResult {
  const warnings: ConfigWarning[] = [];
  const problems: ConfigProblem[] = [];
  const place = (path: readonly PropertyKey[]): { file?: string; line?: number } => {
    const origin = options.locate?.(path);
    return origin ? { file: origin.file, line: origin.line } : { file: options.defaultFile };
  };
  const warn = (path: readonly PropertyKey[], message: string): void => {
    warnings.push({ message, key: path.map(String).join('.'), ...place(path) });
  };
  const fail = (path: readonly PropertyKey[], problem: string, fix: string): void => {
    problems.push({ key: path.map(String).join('.'), problem, fix, ...place(path) });
  };

  // A near-miss of a real key would leave the real one silently at its default, so a key we can name
  // a fix for stops the run before it spends anything; a key we know nothing about only warns.
  const unknown = (path: readonly PropertyKey[], what: string, hint: string): void => {
    if (hint) fail(path, `${what} would be ignored`, hint.replace(/^; /, ''));
    else warn(path, `${what} (ignored)`);
  };

  if (!isPlainObject(raw)) {
    fail(
      [],
      `the config must be a mapping of sections, got ${show(raw)}`,
      'write sections such as "train:" and "optimizer:" at the top level',
    );
    return { ok: false, problems, warnings };
  }
  const cfg = structuredClone(raw);

  for (const [top, value] of Object.entries(cfg)) {
    if (!isSectionName(top)) {
      unknown([top], `unknown section "${top}"`, suggestKey(top, undefined, options.flatNames));
      delete cfg[top];
      continue;
    }
    if (value === null || value === undefined) {
      cfg[top] = {};
      continue;
    }
    if (!isPlainObject(value)) {
      fail(
        [top],
        `section "${top}" must be a mapping, got ${show(value)}`,
        `write the ${top} keys indented under "${top}:"`,
      );
      delete cfg[top];
      continue;
    }
    if (top === 'prices') continue;
    if (top === 'limits' && 'max_minutes' in value) mapMaxMinutes(value, warn, fail);
    for (const key of Object.keys(value)) {
      // The reference's keys: honoured, mapped with a notice, or refused (disposition.ts).
      const d = dispositionOf(`${top}.${key}`);
      const known = fieldSchema(top, key) !== undefined;
      if (d?.kind === 'refused') {
        if (!d.inert(value[key]))
          fail([top, key], `${top}.${key} (${show(value[key])}) ${d.reason}`, d.alternative);
        if (!d.inert(value[key]) || !known) delete value[key];
        continue;
      }
      if (d?.kind === 'mapped') {
        if (d.applies ? d.applies(value[key]) : value[key] !== undefined) warn([top, key], d.notice);
        if (d.drop || !known) delete value[key];
        continue;
      }
      if (known) continue;
      const hint = suggestKey(key, top, options.flatNames);
      // Every env key something reads is a field, so any other would be passed on and never read:
      // refused even without a near miss (the reference's adapters drop such a key without a word).
      if (top === 'env' && !hint) {
        fail(
          [top, key],
          `unknown key "${key}" in section env: nothing reads it, so it would be ignored`,
          `remove it, or use one of the env keys: ${Object.keys(envFields).join(', ')}`,
        );
      } else unknown([top, key], `unknown key "${key}" in section ${top}`, hint);
      delete value[key];
    }
  }

  const optimizer = isPlainObject(cfg.optimizer) ? cfg.optimizer : undefined;
  for (const dotted of Object.keys(ALIASED_KEYS)) {
    const key = dotted.split('.')[1];
    const value = optimizer?.[key];
    if (typeof value !== 'string' || !optimizer) continue;
    const canonical = normalizeAlias(dotted, value);
    if (canonical === undefined) {
      const canonicalSet = new Set(Object.values(ALIASED_KEYS[dotted]));
      const canonicals = [...canonicalSet].join(', ');
      const spellings = Object.keys(ALIASED_KEYS[dotted])
        .filter((s) => !canonicalSet.has(s))
        .join(', ');
      fail(
        ['optimizer', key],
        `unknown ${key} ${JSON.stringify(value)}`,
        `use one of ${canonicals} (also accepted: ${spellings})`,
      );
      delete optimizer[key];
    } else {
      optimizer[key] = canonical;
    }
  }

  // Cross-field rule checked on the raw values so it is reported even when other keys are wrong.
  // An unset min_learning_rate is only a default, so it follows a smaller learning_rate instead.
  const lr = optimizer?.learning_rate ?? optimizerFields.learning_rate.parse(undefined);
  const minLr = optimizer?.min_learning_rate;
  if (typeof lr === 'number' && Number.isInteger(lr) && lr >= 1) {
    if (minLr === undefined) {
      const fallback = optimizerFields.min_learning_rate.parse(undefined);
      if (fallback > lr) cfg.optimizer = { ...optimizer, min_learning_rate: lr };
    } else if (typeof minLr === 'number' && Number.isInteger(minLr) && minLr > lr) {
      fail(
        ['optimizer', 'min_learning_rate'],
        `min_learning_rate (${minLr}) is larger than learning_rate (${lr})`,
        'set optimizer.min_learning_rate to at most optimizer.learning_rate (the schedule decays from learning_rate down to min_learning_rate)',
      );
    }
  }

  const parsed = configSchema.safeParse(cfg);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const path = issue.path;
      const key = path.map(String).join('.');
      const value = getPath(cfg, path);
      const expected = describeExpected(path);
      if (issue.code === 'unrecognized_keys') {
        fail(
          path,
          `unknown key(s) ${issue.keys.join(', ')}`,
          `remove them; ${key || 'this mapping'} accepts ${expected ?? 'other keys'}`,
        );
      } else if (issue.code === 'custom' && typeof issue.params?.fix === 'string') {
        // A field that explains its own refusal (env.split_ratio).
        fail(path, issue.message, issue.params.fix);
      } else if (value === undefined) {
        fail(path, 'is missing', `add ${key}: <${expected ?? 'a value'}>`);
      } else if (expected) {
        fail(path, `must be ${expected}, got ${show(value)}`, `set ${key} to ${expected}`);
      } else if (typeof path[path.length - 1] === 'number' && describeExpected(path.slice(0, -1))) {
        const listKey = path.slice(0, -1).map(String).join('.');
        const listExpected = describeExpected(path.slice(0, -1)) ?? '';
        fail(
          path,
          `entry ${String(path[path.length - 1])} is ${show(value)}, but the value must be ${listExpected}`,
          `set ${listKey} to ${listExpected}`,
        );
      } else {
        fail(path, `${issue.message}, got ${show(value)}`, `correct ${key}`);
      }
    }
    return { ok: false, problems, warnings };
  }
  if (problems.length > 0) return { ok: false, problems, warnings };

  const config = parsed.data;
  if (
    config.optimizer.skill_update_mode === 'full_rewrite_minibatch' &&
    config.optimizer.lr_control_mode !== 'none'
  ) {
    if (optimizer?.lr_control_mode !== undefined) {
      warn(
        ['optimizer', 'lr_control_mode'],
        `lr_control_mode "${config.optimizer.lr_control_mode}" does not apply to full_rewrite_minibatch (each step keeps one whole candidate); using "none"`,
      );
    }
    config.optimizer.lr_control_mode = 'none';
  }
  // Whole-skill rewrites have no edit budget: the schedule's keys set away from their defaults say so.
  if (config.optimizer.skill_update_mode === 'full_rewrite_minibatch') {
    const idle = keysSet(config.optimizer, optimizerFields, [
      'learning_rate',
      'min_learning_rate',
      'lr_scheduler',
    ]);
    if (idle.length) {
      const names = idle.map((k) => `optimizer.${k}`).join(', ');
      warn(
        ['optimizer', idle[0]],
        `${names}: full_rewrite_minibatch has no edit budget (each step keeps one whole rewritten skill), so ${idle.length > 1 ? 'they have' : 'it has'} no effect; remove ${idle.length > 1 ? 'them' : 'it'} or use patch or rewrite_from_suggestions`,
      );
    }
  }
  for (const { path, message } of dependentKeyWarnings(config)) warn(path, message);
  // The appendix options only act with skill-aware reflection on; a non-default value without it says so.
  if (!config.optimizer.use_skill_aware_reflection) {
    const changed: Array<[string, boolean]> = [
      ['skill_aware_appendix_source', config.optimizer.skill_aware_appendix_source !== 'both'],
      ['skill_aware_consolidate_threshold', config.optimizer.skill_aware_consolidate_threshold !== 0],
    ];
    for (const [key, set] of changed) {
      if (set) {
        warn(
          ['optimizer', key],
          `optimizer.${key} has no effect while optimizer.use_skill_aware_reflection is false; set that to true or remove ${key}`,
        );
      }
    }
  }
  // Legacy azure_* names fill the azure_openai_* keys when those are blank (reference behaviour).
  const m = config.model;
  if (!m.azure_openai_endpoint && m.azure_endpoint) m.azure_openai_endpoint = m.azure_endpoint;
  if (!m.azure_openai_api_version && m.azure_api_version) m.azure_openai_api_version = m.azure_api_version;
  if (!m.azure_openai_api_key && m.azure_api_key) m.azure_openai_api_key = m.azure_api_key;
  return { ok: true, config, warnings };
}

/**
 * `limits.max_minutes` (the spelling the issue and other tools use) is read as max_wall_time_s in
 * seconds, with a notice; given beside max_wall_time_s it is refused, as the two would disagree.
 */
function mapMaxMinutes(
  limits: Record<string, unknown>,
  warn: (path: readonly PropertyKey[], message: string) => void,
  fail: (path: readonly PropertyKey[], problem: string, fix: string) => void,
): void {
  const minutes = limits.max_minutes;
  delete limits.max_minutes;
  const path = ['limits', 'max_minutes'];
  if (typeof minutes !== 'number' || !Number.isFinite(minutes) || minutes < 0) {
    fail(
      path,
      `limits.max_minutes must be a number ≥ 0, got ${show(minutes)}`,
      'give the minutes as a number',
    );
  } else if (limits.max_wall_time_s !== undefined) {
    fail(
      path,
      'limits.max_minutes and limits.max_wall_time_s both set the time cap',
      'keep one: max_wall_time_s in seconds (max_minutes is read as it)',
    );
  } else {
    limits.max_wall_time_s = minutes * 60;
    warn(
      path,
      `limits.max_minutes: ${minutes} is read as limits.max_wall_time_s: ${minutes * 60}; rename it`,
    );
  }
}
