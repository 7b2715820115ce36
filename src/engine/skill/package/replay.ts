/**
 * A list of edits applied to a skill on disk, as a training step's update stage applies them
 * (`skillopt apply-edits`): the skill read as env.skill_init is (a file, or a folder through the
 * package reader), edits applied under optimizer.package_edits, and each changed file written back.
 */
import { chmodSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SkillOptError } from '../../errors';
import { writeFileAtomic } from '../../store/atomic';
import { applyEdits, type AnchorMode, type Edit, type EditReportRow } from '../applyEdits';
import { keepDescription } from '../description';
import { readSkillInit } from '../skillFile';
import { checkNoLink } from './apply';
import { packageChanges, type PackageChange } from './changes';
import { editFile, isAddedScript, OUTSIDE_POLICY } from './edits';
import { isSkillFolder } from './folder';
import type { PackageEditPolicy } from './policy';
import { SKILL_FILE, skillBody } from './text';

export interface EditTarget {
  path: string;
  /** A skill folder (SKILL.md with references/, scripts/, assets/), read as the loop reads one. */
  folder: boolean;
  text: string;
  notices: string[];
}

export interface ReplayOptions {
  anchorMode: AnchorMode;
  policy: PackageEditPolicy;
  /** activation.enabled: a body edit of the front-matter description is undone, as in training. */
  keepDescription: boolean;
}

export interface ReplayResult {
  /** SKILL.md after the edits. */
  skill: string;
  report: EditReportRow[];
  /** The files that differ from the skill as read (SKILL.md first). */
  changes: PackageChange[];
  /** The edits changed the description and it was put back (activation track on). */
  descriptionKept: boolean;
  /** Rows skipped because optimizer.package_edits does not allow them. */
  outsidePolicy: EditReportRow[];
}

/** The skill at `path` as training reads env.skill_init (a folder through the package reader). */
export function readEditTarget(path: string, maxBytes: number): EditTarget {
  const { text, notices } = readSkillInit(path, maxBytes);
  return { path, folder: isSkillFolder(path), text, notices };
}

export function replayEdits(target: EditTarget, edits: readonly Edit[], opts: ReplayOptions): ReplayResult {
  if (!target.folder) {
    const i = edits.findIndex((e) => editFile(e) !== SKILL_FILE);
    if (i >= 0) {
      const folder = join(target.path, '..');
      throw new SkillOptError(
        'config',
        `edit ${i + 1} names ${editFile(edits[i])}, but the skill given is one file`,
        {
          file: target.path,
          key: `edits[${i}].file`,
          fix: isSkillFolder(folder)
            ? `pass the skill folder: --skill ${folder}`
            : 'pass the skill folder (SKILL.md beside references/) to edit its other files',
        },
      );
    }
  }
  const applied = applyEdits(target.text, edits, { anchorMode: opts.anchorMode, packagePolicy: opts.policy });
  const after = opts.keepDescription ? keepDescription(target.text, applied.text) : applied.text;
  return {
    skill: skillBody(after),
    report: applied.report,
    changes: packageChanges(target.text, after),
    descriptionKept: after !== applied.text,
    outsidePolicy: applied.report.filter((r) => r.status === OUTSIDE_POLICY),
  };
}

/** Writes each changed file into the skill (never through a symbolic link); returns the paths written. */
export function writeChanges(target: EditTarget, changes: readonly PackageChange[]): string[] {
  if (!target.folder) {
    const change = changes[0];
    if (!change) return [];
    writeKeepingMode(target.path, change.after.endsWith('\n') ? change.after : `${change.after}\n`);
    return [target.path];
  }
  return changes.map((c) => {
    checkNoLink(target.path, c.path, 'apply-edits');
    const to = join(target.path, ...c.path.split('/'));
    writeKeepingMode(to, c.after, c.status === 'added' && isAddedScript(c.path, c.after) ? 0o755 : undefined);
    return to;
  });
}

/**
 * Writes `text` at `path` with the permission bits of the file it replaces (the write goes through
 * a new file, which would otherwise make an executable script plain), or `added` for a new one.
 */
function writeKeepingMode(path: string, text: string, added?: number): void {
  const mode = statSync(path, { throwIfNoEntry: false })?.mode ?? added;
  writeFileAtomic(path, text);
  if (mode !== undefined) chmodSync(path, mode & 0o777);
}
