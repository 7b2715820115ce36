/**
 * Prediction folder names of an evaluation folder. Each task id gets one folder whose name is safe
 * (no separators, never `.`/`..`) and unique even on a case-insensitive disk; ids whose name is not
 * the id itself are recorded in `prediction_names.json`, so readers find them and a resumed run keeps
 * every name it gave before.
 */
import { existsSync } from 'node:fs';
import { SkillOptError } from '../errors';
import { writeJsonAtomic } from './atomic';
import { evalPaths, hashedPredictionSegment, predictionSegment } from './layout';
import { predictionNamesSchema, readRunJson } from './runSchemas';

/**
 * The folder a name is on a disk that ignores case and drops trailing dots and spaces (Windows,
 * macOS by default): two names with the same fold are one folder there.
 */
const fold = (name: string): string => name.toLowerCase().replace(/[. ]+$/, '');

function recorded(dir: string): Record<string, string> {
  return readRunJson(evalPaths(dir).predictionNames, predictionNamesSchema) ?? {};
}

/**
 * Gives every id of `ids` its folder name in evaluation folder `dir` (keeping the names recorded
 * there) and records the mapping before any conversation is written. Returns id → folder name.
 */
export function assignPredictionNames(dir: string, ids: readonly string[]): Map<string, string> {
  const known = recorded(dir);
  const names = new Map<string, string>(Object.entries(known));
  // Folded names in use: two names differing only in case are one folder on macOS and Windows.
  const taken = new Set([...names.values()].map(fold));
  const taskIds = [...new Set(ids)];
  // An id whose own name is in use (by its case twin) gets its hashed name instead.
  const pending = taskIds.filter((id) => !names.has(id));
  for (const id of pending) {
    const own = predictionSegment(id);
    if (!taken.has(fold(own))) {
      names.set(id, own);
      taken.add(fold(own));
    }
  }
  for (const id of pending) {
    if (names.has(id)) continue;
    const hashed = hashedPredictionSegment(id);
    // Two distinct ids with the same 64-bit hash prefix (and the same folded prefix) would need ~4e9 ids.
    if (taken.has(fold(hashed))) {
      throw new SkillOptError('internal', `two task ids share the prediction folder name ${hashed}`);
    }
    names.set(id, hashed);
    taken.add(fold(hashed));
  }
  const record = Object.fromEntries([...names].filter(([id, name]) => id !== name));
  if (Object.keys(record).length !== Object.keys(known).length) {
    writeJsonAtomic(evalPaths(dir).predictionNames, record);
  }
  return names;
}

/**
 * Where the conversation of task `id` is in evaluation folder `dir` (as its writer named it). A
 * folder without a record of the id may come from the Python reference or an older SkillOpt, which
 * named it by the id with unsafe characters replaced: that folder is used when it is the one there.
 */
export function conversationPath(dir: string, id: string): string {
  return conversationPaths(dir)(id);
}

/** conversationPath for many ids of one folder: its name record is read once. */
export function conversationPaths(dir: string): (id: string) => string {
  const paths = evalPaths(dir);
  const names = recorded(dir);
  return (id) => {
    const named = names[id];
    if (named) return paths.conversationIn(named);
    const path = paths.conversationIn(predictionSegment(id));
    const legacy = paths.conversationIn(id.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120) || '_');
    return !existsSync(path) && existsSync(legacy) ? legacy : path;
  };
}
