/** An eval record (evalFormats.ts) made into task fields: its assertions, threshold and input files found on disk. */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { SkillOptError, type ErrorPlace } from '../errors';
import type { Assertion } from '../scoring/assertions';
import { findContained } from './containedFile';
import { readEvalRecord } from './evalFormats';
import type { TaskFile } from './taskFiles';
import { decodeUtf8 } from './utf8';

/** An input file of a task: a chat target gets its text inline, an agent target a copy in its workspace. */
export interface TaskInputFile {
  /** As the eval file wrote it (the name in the workspace and in prompts). */
  name: string;
  path: string;
  digest: string;
  /** Undefined for a binary file (not UTF-8, or holding NUL bytes). */
  text?: string;
}

export interface AppliedEvalRecord {
  fields: Record<string, unknown>;
  assertions: Assertion[];
  /** What the TaskItem gets beyond the common fields. */
  extra: {
    assertions?: Assertion[];
    passThreshold?: number;
    files?: TaskInputFile[];
  };
}

export function applyEvalRecord(
  rec: Record<string, unknown>,
  index: number,
  place: ErrorPlace,
  file: TaskFile,
  notices: Set<string>,
): AppliedEvalRecord | undefined {
  const read = readEvalRecord(rec, index, place, notices, file.evalDefaults);
  if (!read) return undefined;
  const files = read.files.map((name, i) =>
    inputFile(
      name,
      findInputFile(name, file.path, {
        ...place,
        key: place.key ? `${place.key}.files[${i}]` : `files[${i}]`,
      }),
    ),
  );
  return {
    fields: read.fields,
    assertions: read.assertions,
    extra: {
      ...(read.assertions.length ? { assertions: read.assertions } : {}),
      ...(read.threshold !== undefined ? { passThreshold: read.threshold } : {}),
      ...(files.length ? { files } : {}),
    },
  };
}

/**
 * skill-creator writes input files relative to the skill folder (`evals/files/x.pdf` from
 * `evals/evals.json`); other files name them relative to themselves. Either way the file must lie in
 * that folder: an eval file (a cloned skill's, say) must not make SkillOpt send any file on the disk.
 */
function findInputFile(name: string, taskFile: string, place: ErrorPlace): string {
  const own = dirname(resolve(taskFile));
  const root = basename(own) === 'evals' ? dirname(own) : own;
  const folder = root === own ? `the eval file's folder ${root}` : `the skill folder ${root}`;
  const copyFix = `copy the file into ${root} and name it by its path relative to that folder (e.g. ${root === own ? '' : 'evals/'}files/${basename(name)})`;
  const found = isAbsolute(name)
    ? ({ outside: 'path', path: name } as const)
    : findContained(name, [...new Set([root, own])], [root]);
  if ('found' in found) return found.found;
  if ('outside' in found) {
    const why =
      found.outside === 'link'
        ? `is a symbolic link leading out of ${folder}`
        : isAbsolute(name)
          ? `is an absolute path; input files must be inside ${folder}`
          : `leads out of ${folder}`;
    throw new SkillOptError('tasks', `Input file ${name} ${why}`, { ...place, fix: copyFix });
  }
  if ('notFile' in found) {
    throw new SkillOptError('tasks', `Input file ${name} is ${found.kind}, not a regular file`, {
      ...place,
      fix: `put a regular file at ${found.notFile}`,
    });
  }
  throw new SkillOptError('tasks', `Input file ${name} not found`, {
    ...place,
    fix: `put it at ${resolve(root, name)} (paths are relative to the skill folder for evals/evals.json, else to the eval file)`,
  });
}

function inputFile(name: string, path: string): TaskInputFile {
  const bytes = readFileSync(path);
  const decoded = bytes.includes(0) ? undefined : decodeUtf8(bytes);
  return {
    name,
    path,
    digest: createHash('sha256').update(bytes).digest('hex').slice(0, 16),
    ...(decoded && 'text' in decoded ? { text: decoded.text } : {}),
  };
}
