import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, normalize, resolve } from 'node:path';
import { isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import type { Node as YamlNode } from 'yaml';
import { SkillOptError } from '../errors';
import { ALIAS_BOMB, yamlValue } from '../yamlValue';
import { applyBackendChoice } from './backendChoice';
import { CODEX_ALIASES, DERIVED_FLAT_KEYS, FLAT_TO_DOTTED, FLAT_TO_PATH } from './flat';
import { readConfigText } from './readConfigFile';
import { applyCfgOptions, applyLegacyArgs, deleteAt, getAt, moveValue, Origins } from './overrides';
import type { ConfigPath, Layer } from './overrides';
import { isSectionName, SECTION_NAMES } from './schema';
import type { SkillOptConfig } from './schema';
import { problemsToError, suggestKey } from './schema/problems';
import type { ConfigOrigin, ConfigProblem, ConfigWarning } from './schema/problems';
import { isPlainObject, validateConfigObject } from './schema/validate';

/**
 * Load a SkillOpt YAML config: `_base_` inheritance, Codex aliases, legacy flat layouts,
 * `--cfg-options`, legacy flags, validation, and path resolution, in the reference's order.
 */

export interface LoadConfigOptions {
  /** `--cfg-options` items, `section.key=value`. */
  overrides?: readonly string[];
  /** Legacy flags as given on the command line, e.g. `['--batch_size', '40']`; applied last. */
  legacyArgs?: readonly string[];
  /** Directory relative paths fall back to (and the config path is resolved against). */
  cwd?: string;
}

export interface LoadedConfig {
  config: SkillOptConfig;
  warnings: ConfigWarning[];
  /** Absolute paths of every file read, the given config first. */
  files: string[];
  /** Absolute directory of the given config file. */
  configDir: string;
  /** The folder relative paths from the command line (`--cfg-options`, flags) were resolved against. */
  cwd: string;
  /** Where a key was set (`'env.data_path'` or a path array), for later error messages. */
  locate: (key: string | readonly string[]) => ConfigOrigin | undefined;
}

/** Sections whose presence as a mapping marks a layer as structured (the rest is flat). */
const STRUCTURE_SECTIONS = SECTION_NAMES.filter((s) => s !== 'prices');

interface LoadContext {
  files: string[];
  display: Map<string, string>;
  warnings: ConfigWarning[];
}

export function loadConfig(configPath: string, options: LoadConfigOptions = {}): LoadedConfig {
  const cwd = resolve(options.cwd ?? process.cwd());
  const abs = resolve(cwd, configPath);
  const ctx: LoadContext = { files: [], display: new Map(), warnings: [] };
  const layer = loadFile(abs, configPath, [], ctx);

  applyCfgOptions(layer, options.overrides ?? [], ctx.warnings);
  applyLegacyArgs(layer, options.legacyArgs ?? [], ctx.warnings);

  const locatePath = (path: readonly PropertyKey[]): ConfigOrigin | undefined =>
    layer.origins.locate(path.map(String));
  const result = validateConfigObject(layer.data, {
    locate: locatePath,
    defaultFile: configPath,
    flatNames: FLAT_TO_DOTTED,
  });
  ctx.warnings.push(...result.warnings);
  if (!result.ok) throw problemsToError(inFileOrder(result.problems, [...ctx.display.values()]));

  const config = result.config;
  // Exact origins only: a key counts as set by the user where it was written, not via its section.
  const notice = applyBackendChoice(config, (path) => layer.origins.get(path));
  if (notice) ctx.warnings.push(notice);
  resolvePaths(config, locatePath, cwd);
  const skillInit = config.env.skill_init;
  if (skillInit && !existsSync(skillInit)) {
    const origin = locatePath(['env', 'skill_init']);
    ctx.warnings.push({
      message: `skill file not found: ${skillInit}; training would start from a blank skill (create the file, or set env.skill_init to "" to start blank on purpose)`,
      file: origin?.file,
      line: origin?.line,
      key: 'env.skill_init',
    });
  }

  return {
    config,
    warnings: ctx.warnings,
    files: ctx.files,
    configDir: dirname(abs),
    cwd,
    locate: (key) => locatePath(typeof key === 'string' ? key.split('.') : key),
  };
}

/** The problem a reader meets first: root file before its bases, top to bottom; command line last. */
function inFileOrder(problems: readonly ConfigProblem[], files: readonly string[]): ConfigProblem[] {
  const rank = (p: ConfigProblem): number => {
    const i = p.file === undefined ? -1 : files.indexOf(p.file);
    return i < 0 ? files.length : i;
  };
  return problems
    .map((p, i) => ({ p, i }))
    .sort((a, b) => rank(a.p) - rank(b.p) || (a.p.line ?? Infinity) - (b.p.line ?? Infinity) || a.i - b.i)
    .map(({ p }) => p);
}

// ── files and inheritance ────────────────────────────────────────────────────────────────────

function loadFile(
  abs: string,
  display: string,
  chain: readonly string[],
  ctx: LoadContext,
  via?: ConfigOrigin,
): Layer {
  if (chain.includes(abs)) {
    const loop = [...chain.slice(chain.indexOf(abs)), abs].map((p) => ctx.display.get(p) ?? p).join(' → ');
    throw new SkillOptError('config', `_base_ inheritance loops: ${loop}`, {
      file: via?.file,
      line: via?.line,
      key: '_base_',
      fix: 'remove the _base_ entry that points back to a file already in the chain',
    });
  }
  const text = readConfigText(abs, display, via);
  ctx.files.push(abs);
  ctx.display.set(abs, display);

  const layer = parseLayer(text, display, dirname(abs));
  const baseRef = layer.data._base_;
  const baseOrigin = layer.origins.get(['_base_']) ?? { file: display };
  delete layer.data._base_;
  layer.origins.clearUnder(['_base_']);
  normalizeLayer(layer, ctx.warnings);

  const refs = baseList(baseRef, baseOrigin);
  let merged: Layer | undefined;
  for (const ref of refs) {
    const baseDisplay = isAbsolute(ref) ? ref : normalize(join(dirname(display), ref));
    const base = loadFile(resolve(dirname(abs), ref), baseDisplay, [...chain, abs], ctx, baseOrigin);
    merged = merged ? mergeLayers(merged, base) : base;
  }
  return merged ? mergeLayers(merged, layer) : layer;
}

function baseList(ref: unknown, origin: ConfigOrigin): string[] {
  if (ref === undefined || ref === null || ref === '') return [];
  if (typeof ref === 'string') return [ref];
  if (Array.isArray(ref) && ref.every((r): r is string => typeof r === 'string' && r !== '')) return ref;
  throw new SkillOptError('config', '_base_ must be a file path or a list of file paths', {
    file: origin.file,
    line: origin.line,
    key: '_base_',
    fix: 'write _base_: ../_base_/default.yaml',
  });
}

function parseLayer(text: string, display: string, dir: string): Layer {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true });
  const [error] = doc.errors;
  if (error) {
    const pos = error.linePos?.[0];
    const summary = error.message.split('\n')[0].replace(/:\s*$/, '');
    throw new SkillOptError('config', `not valid YAML: ${summary}`, {
      file: display,
      line: pos?.line,
      fix: pos
        ? `correct the YAML at line ${pos.line}, column ${pos.col} (indent with spaces, quote values that contain ": " or " #")`
        : 'correct the YAML syntax',
    });
  }
  const parsed = yamlValue(doc);
  if (!parsed) throw new SkillOptError('config', ALIAS_BOMB.problem, { file: display, fix: ALIAS_BOMB.fix });
  const data = parsed.value;
  if (data === null || data === undefined) return { data: {}, origins: new Origins() };
  if (!isPlainObject(data)) {
    throw new SkillOptError('config', 'the top level must be a mapping of sections', {
      file: display,
      line: 1,
      fix: 'start the file with sections such as "train:" and "optimizer:"',
    });
  }
  const origins = new Origins();
  const walk = (node: unknown, prefix: string[]): void => {
    if (!isMap(node)) return;
    for (const pair of node.items) {
      const keyNode = pair.key as YamlNode | null;
      const key = isScalar(keyNode) ? String(keyNode.value) : String(keyNode);
      const range = keyNode?.range ?? (pair.value as YamlNode | null)?.range;
      const path = [...prefix, key];
      if (range) origins.set(path, { file: display, line: lineCounter.linePos(range[0]).line, dir });
      walk(pair.value, path);
    }
  };
  walk(doc.contents, []);
  return { data, origins };
}

/** Child over base: mappings merge recursively, anything else (lists included) is replaced. */
function mergeLayers(base: Layer, child: Layer): Layer {
  const origins = new Origins();
  origins.addAll(base.origins);
  const merge = (
    b: Record<string, unknown>,
    c: Record<string, unknown>,
    path: string[],
  ): Record<string, unknown> => {
    const out = { ...b };
    for (const [key, value] of Object.entries(c)) {
      const prev = out[key];
      if (isPlainObject(prev) && isPlainObject(value)) out[key] = merge(prev, value, [...path, key]);
      else {
        out[key] = value;
        origins.clearUnder([...path, key]);
      }
    }
    return out;
  };
  const data = merge(base.data, child.data, []);
  origins.addAll(child.origins);
  return { data, origins };
}

// ── per-layer normalisation ──────────────────────────────────────────────────────────────────

/** Within one mapping: the first Codex alias fills a missing canonical key; aliases are dropped. */
function normalizeCodexAliases(layer: Layer, at: ConfigPath): void {
  const node = getAt(layer.data, at);
  if (!isPlainObject(node)) return;
  for (const [canonical, aliases] of CODEX_ALIASES) {
    for (const alias of aliases) {
      if (!(alias in node)) continue;
      if (node[canonical] === undefined) moveValue(layer, [...at, alias], [...at, canonical]);
      else {
        delete node[alias];
        layer.origins.clearUnder([...at, alias]);
      }
    }
  }
}

/**
 * Bring one file's mapping into the sectioned shape before it is merged, so a child's value wins
 * over its base whichever layout either file uses. Flat keys move to their section (a structured
 * key in the same file wins over its flat twin); in a flat file every other top-level key is an
 * env key, as the reference passes them to the environment adapter.
 */
function normalizeLayer(layer: Layer, warnings: ConfigWarning[]): void {
  const data = layer.data;
  const structured = STRUCTURE_SECTIONS.some((s) => isPlainObject(data[s]));
  normalizeCodexAliases(layer, []);
  normalizeCodexAliases(layer, ['model']);
  // Flat layout: `env: searchqa` names the environment. Moved first, because other flat keys
  // are about to be filed under env.
  if (data.env !== null && data.env !== undefined && !isPlainObject(data.env))
    moveValue(layer, ['env'], ['env', 'name']);

  for (const key of Object.keys(data)) {
    const value = data[key];
    const origin = layer.origins.get([key]);
    if (isSectionName(key)) {
      if (value === null) data[key] = {};
      continue;
    }
    if (DERIVED_FLAT_KEYS.has(key)) {
      deleteAt(data, [key]);
      layer.origins.clearUnder([key]);
      continue;
    }
    const target = FLAT_TO_PATH.get(key);
    if (target) {
      if (getAt(data, target) !== undefined) {
        deleteAt(data, [key]);
        layer.origins.clearUnder([key]);
      } else moveValue(layer, [key], target);
      continue;
    }
    if (key === 'max_analyst_rounds') {
      warnings.push({
        message:
          'max_analyst_rounds was retired and is ignored (the analyst call count follows from the rollout results, minibatch_size and failure_only); remove it',
        file: origin?.file,
        line: origin?.line,
        key: 'gradient.max_analyst_rounds',
      });
      deleteAt(data, [key]);
      layer.origins.clearUnder([key]);
      continue;
    }
    if (!structured) {
      moveValue(layer, [key], ['env', key]);
      continue;
    }
    // A mapping here is an unknown section; validation reports it with its line.
    if (isPlainObject(value)) continue;
    warnings.push({
      message: `top-level key "${key}" is not a section, so it is passed to the environment as env.${key}${suggestKey(key, undefined, FLAT_TO_DOTTED)}`,
      file: origin?.file,
      line: origin?.line,
      key,
    });
    moveValue(layer, [key], ['env', key]);
  }
}

// ── paths ────────────────────────────────────────────────────────────────────────────────────

/**
 * A relative path is taken relative to the file that set it; when that does not exist but the
 * cwd-relative one does, the latter wins (reference configs are written for the repo root).
 */
export function resolveConfigPath(value: string, origin: ConfigOrigin | undefined, cwd: string): string {
  const expanded = value === '~' || value.startsWith('~/') ? join(homedir(), value.slice(1)) : value;
  if (isAbsolute(expanded)) return normalize(expanded);
  const primary = resolve(origin?.dir ?? cwd, expanded);
  if (existsSync(primary)) return primary;
  const fallback = resolve(cwd, expanded);
  return existsSync(fallback) ? fallback : primary;
}

const ENV_PATH_KEYS = [
  'skill_init',
  'data_path',
  'split_dir',
  'split_output_dir',
  'out_root',
  'target_system_prompt',
] as const;

function resolvePaths(
  config: SkillOptConfig,
  locate: (path: readonly PropertyKey[]) => ConfigOrigin | undefined,
  cwd: string,
): void {
  for (const key of ENV_PATH_KEYS) {
    const value = config.env[key];
    if (value.trim() !== '') config.env[key] = resolveConfigPath(value, locate(['env', key]), cwd);
  }
  // OfficeQA's document folders: a list, or the reference's `dir1:dir2` / `dir1,dir2` text.
  for (const key of ['data_dirs', 'docs_dirs'] as const) {
    const value = config.env[key];
    if (value === undefined) continue;
    const dirs = (typeof value === 'string' ? value.split(/[:,]/) : value)
      .map((d) => d.trim())
      .filter(Boolean);
    config.env[key] = dirs.map((d) => resolveConfigPath(d, locate(['env', key]), cwd));
  }
  if (config.cache.dir.trim() !== '')
    config.cache.dir = resolveConfigPath(config.cache.dir, locate(['cache', 'dir']), cwd);
  const triggers = config.activation.trigger_file;
  if (triggers.trim() !== '')
    config.activation.trigger_file = resolveConfigPath(triggers, locate(['activation', 'trigger_file']), cwd);
}
