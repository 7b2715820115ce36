import { parse as parseYaml } from 'yaml';
import { SkillOptError } from '../errors';
import { canonicalCodexKey, LEGACY_TO_PATH, REFERENCE_JUDGE_FLAGS } from './flat';
import { fieldSchema } from './schema';
import type { ConfigOrigin, ConfigWarning } from './schema/problems';
import { isPlainObject } from './schema/validate';

/**
 * Command-line changes to a loaded config: `--cfg-options section.key=value` and the
 * reference's legacy flags (`--batch_size 40`). Also the raw-tree and origin bookkeeping shared
 * with load.ts, so every value keeps track of the file and line (or flag) that set it.
 */

type Dict = Record<string, unknown>;
export type ConfigPath = readonly string[];

const SEP = '\u0000';

/** Which file/line (or command-line source) set each path of a raw config tree. */
export class Origins {
  private readonly map = new Map<string, ConfigOrigin>();

  set(path: ConfigPath, origin: ConfigOrigin): void {
    this.map.set(path.join(SEP), origin);
  }

  get(path: ConfigPath): ConfigOrigin | undefined {
    return this.map.get(path.join(SEP));
  }

  /**
   * Origin of the path or of its nearest recorded ancestor (values inside lists have none); else of
   * a value under it (a section only `--cfg-options bogus.x=1` made is located there, not in the file).
   */
  locate(path: ConfigPath): ConfigOrigin | undefined {
    for (let n = path.length; n > 0; n--) {
      const hit = this.map.get(path.slice(0, n).join(SEP));
      if (hit) return hit;
    }
    const prefix = path.join(SEP) + SEP;
    for (const [k, v] of this.map) if (k.startsWith(prefix)) return v;
    return undefined;
  }

  /** Forget the path and everything below it (the value there was replaced). */
  clearUnder(path: ConfigPath): void {
    const exact = path.join(SEP);
    for (const k of [...this.map.keys()]) if (k === exact || k.startsWith(exact + SEP)) this.map.delete(k);
  }

  /** Re-key the path and everything below it, as when a flat key moves into its section. */
  move(from: ConfigPath, to: ConfigPath): void {
    const exact = from.join(SEP);
    const moved: Array<[string, ConfigOrigin]> = [];
    for (const [k, v] of this.map) {
      if (k === exact || k.startsWith(exact + SEP)) moved.push([to.join(SEP) + k.slice(exact.length), v]);
    }
    this.clearUnder(from);
    for (const [k, v] of moved) this.map.set(k, v);
  }

  addAll(other: Origins): void {
    for (const [k, v] of other.map) this.map.set(k, v);
  }
}

export function getAt(root: Dict, path: ConfigPath): unknown {
  let node: unknown = root;
  for (const p of path) {
    if (!isPlainObject(node)) return undefined;
    node = node[p];
  }
  return node;
}

/** Set a value, creating (or replacing non-mapping) intermediate levels. */
export function setAt(root: Dict, path: ConfigPath, value: unknown): void {
  let node = root;
  for (const p of path.slice(0, -1)) {
    const next = node[p];
    if (isPlainObject(next)) node = next;
    else {
      const created: Dict = {};
      node[p] = created;
      node = created;
    }
  }
  node[path[path.length - 1]] = value;
}

export function deleteAt(root: Dict, path: ConfigPath): void {
  const parent = getAt(root, path.slice(0, -1));
  if (isPlainObject(parent)) delete parent[path[path.length - 1]];
}

/** A raw config tree with the origin of each value. */
export interface Layer {
  data: Dict;
  origins: Origins;
}

/** Move a value and its origins to another path (no-op when nothing is there). */
export function moveValue(layer: Layer, from: ConfigPath, to: ConfigPath): void {
  const value = getAt(layer.data, from);
  if (value === undefined) return;
  deleteAt(layer.data, from);
  layer.origins.move(from, to);
  setAt(layer.data, to, value);
}

// ── value casting ────────────────────────────────────────────────────────────────────────────

const INT = /^[+-]?\d+$/;
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * The reference's auto-cast for command-line values: true/yes and false/no (any case) → boolean,
 * integers, floats, otherwise the string. Additions: `null`/`~` → null, and a value that starts
 * with `[` or `{` is read as a YAML flow list/mapping.
 */
export function castOverrideValue(text: string): unknown {
  const t = text.trim();
  const lower = t.toLowerCase();
  if (lower === 'true' || lower === 'yes') return true;
  if (lower === 'false' || lower === 'no') return false;
  if (lower === 'null' || t === '~') return null;
  if (INT.test(t) || FLOAT.test(t)) return Number(t);
  if (t.startsWith('[') || t.startsWith('{')) {
    try {
      return parseYaml(t) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

/** A boolean as the reference's settings spell one (true/false, 1/0, yes/no, on/off). */
export function parseBool(text: string): boolean | undefined {
  const lower = text.trim().toLowerCase();
  if (lower === 'true' || lower === '1' || lower === 'yes' || lower === 'on') return true;
  if (lower === 'false' || lower === '0' || lower === 'no' || lower === 'off') return false;
  return undefined;
}

/**
 * Cast with the target field in mind: a string field keeps the text as written (a model named
 * "4" stays "4"), a boolean field also takes 1/0 like the reference's flag parser.
 */
export function castForPath(path: ConfigPath, text: string): unknown {
  const field = path.length === 2 ? fieldSchema(path[0], path[1]) : undefined;
  if (!field) return castOverrideValue(text);
  const takesBool = field.safeParse(true).success;
  const takesNumber = field.safeParse(1).success;
  const takesString = field.safeParse('x').success;
  const isNull = ['null', '~'].includes(text.trim().toLowerCase()) && field.safeParse(null).success;
  if (isNull) return null;
  if (takesBool && !takesNumber && !takesString) return parseBool(text) ?? text;
  if (takesString && !takesNumber && !takesBool) return text;
  return castOverrideValue(text);
}

// ── routing ──────────────────────────────────────────────────────────────────────────────────

const RETIRED = 'gradient.max_analyst_rounds';
const RETIRED_WHY =
  'the analyst call count follows from the rollout results, gradient.minibatch_size and gradient.failure_only';
const CREDENTIAL = /api[_-]?key|secret|password/i;

/** Maps with free-form names (that may contain dots): the rest of a dotted key is one name. */
function splitDotted(key: string): string[] {
  const parts = key.split('.').map((p) => p.trim());
  if (parts[0] === 'prices' && parts.length >= 3) {
    return ['prices', parts.slice(1, -1).join('.'), parts[parts.length - 1]];
  }
  if (parts[0] === 'limits' && parts[1] === 'provider_concurrency' && parts.length >= 3) {
    return ['limits', 'provider_concurrency', parts.slice(2).join('.')];
  }
  return parts;
}

/** Structured path for a flat name: mapped names go to their section, anything else to env. */
function routeFlatName(name: string): string[] {
  const canonical = canonicalCodexKey(name);
  const target = LEGACY_TO_PATH.get(canonical);
  return target ? [...target] : ['env', canonical];
}

function credentialWarning(path: ConfigPath, value: unknown, source: string): ConfigWarning | undefined {
  const leaf = path[path.length - 1] ?? '';
  if (!CREDENTIAL.test(leaf) || typeof value !== 'string' || value === '') return undefined;
  return {
    message: `${source} puts a credential on the command line, where other local users can read it; set it in an environment variable or in a config file only you can read`,
    file: source,
    key: path.join('.'),
  };
}

function apply(layer: Layer, path: ConfigPath, value: unknown, origin: ConfigOrigin): void {
  setAt(layer.data, path, value);
  layer.origins.clearUnder(path);
  layer.origins.set(path, origin);
}

/**
 * Apply `--cfg-options` items (`section.key=value`, or a bare flat key routed to its section;
 * unknown bare keys go to env like the reference's flat keys).
 */
export function applyCfgOptions(layer: Layer, items: readonly string[], warnings: ConfigWarning[]): void {
  const source = '--cfg-options';
  for (const item of items) {
    const eq = item.indexOf('=');
    const rawKey = eq > 0 ? item.slice(0, eq).trim() : '';
    if (!rawKey) {
      throw new SkillOptError('config', `override "${item}" is not key=value`, {
        file: source,
        fix: 'write each override as section.key=value, e.g. train.batch_size=8',
      });
    }
    const text = item.slice(eq + 1);
    let path: string[];
    if (rawKey.includes('.')) {
      path = splitDotted(rawKey);
      if (path.some((p) => p === '')) {
        throw new SkillOptError('config', `override key "${rawKey}" has an empty part`, {
          file: source,
          fix: 'write the key as section.key, e.g. optimizer.learning_rate',
        });
      }
      if (path[0] === 'model' && path.length === 2) path[1] = canonicalCodexKey(path[1]);
    } else {
      // An unmapped name goes to env, where validate refuses it unless it is an env key.
      path = routeFlatName(rawKey);
    }
    const dotted = path.join('.');
    if (dotted === RETIRED || (path.length === 2 && path[0] === 'env' && path[1] === 'max_analyst_rounds')) {
      warnings.push({
        message: `${RETIRED} was retired and is ignored (${RETIRED_WHY}); remove it`,
        file: source,
        key: RETIRED,
      });
      continue;
    }
    const value = castForPath(path, text);
    const credential = credentialWarning(path, value, source);
    if (credential) warnings.push(credential);
    apply(layer, path, value, { file: source });
  }
}

/** Split `['--a', '1', '--b=2']` into name/value pairs (names with `-` read as `_`). */
export function parseLegacyArgs(args: readonly string[]): Array<{ name: string; text: string }> {
  const out: Array<{ name: string; text: string }> = [];
  for (let i = 0; i < args.length; i++) {
    const token = args[i];
    if (!token.startsWith('--') || token.length === 2) {
      throw new SkillOptError('config', `unexpected command-line argument "${token}"`, {
        file: 'command line',
        fix: 'pass settings as --name value pairs, e.g. --batch_size 40',
      });
    }
    const eq = token.indexOf('=');
    const name = (eq > 0 ? token.slice(2, eq) : token.slice(2)).replace(/-/g, '_');
    let text: string;
    if (eq > 0) text = token.slice(eq + 1);
    else {
      const next = args[i + 1];
      if (next === undefined || (next.startsWith('--') && next.length > 2)) {
        throw new SkillOptError('config', `flag --${name} has no value`, {
          file: `--${name}`,
          fix: `write --${name} <value>`,
        });
      }
      text = next;
      i++;
    }
    if (name === 'config' || name === 'cfg_options') {
      throw new SkillOptError('config', `--${name.replace('_', '-')} cannot be given as a legacy flag here`, {
        file: `--${name}`,
        fix: 'pass the config path and --cfg-options items separately',
      });
    }
    out.push({ name, text });
  }
  return out;
}

/**
 * Apply the reference's legacy flags after --cfg-options (so they win): mapped names go to their
 * section (`--edit_budget` → optimizer.learning_rate), unknown names to env.<name>.
 */
export function applyLegacyArgs(layer: Layer, args: readonly string[], warnings: ConfigWarning[]): void {
  for (const { name, text } of parseLegacyArgs(args)) {
    const source = `--${name}`;
    if (name === 'max_analyst_rounds') {
      warnings.push({
        message: `${RETIRED} was retired and is ignored (${RETIRED_WHY}); remove ${source}`,
        file: source,
        key: RETIRED,
      });
      continue;
    }
    if (name === 'steps_per_epoch') {
      warnings.push({
        message: `${source} is ignored: steps per epoch are derived as ceil(train_size / (batch_size × accumulation))`,
        file: source,
        key: 'train.steps_per_epoch',
      });
      continue;
    }
    const judge = REFERENCE_JUDGE_FLAGS.get(name);
    if (judge) {
      warnings.push({
        message: judge,
        file: source,
        ...(name === 'judge_model' ? { key: 'evaluation.judge_model' } : {}),
      });
      if (name !== 'judge_model') continue;
    }
    const path = routeFlatName(name);
    const value = castForPath(path, text);
    const credential = credentialWarning(path, value, source);
    if (credential) warnings.push(credential);
    apply(layer, path, value, { file: source });
  }
}
