/**
 * What a candidate changes in a skill package, file by file, for the run folder
 * (`candidate_files.json`) and the `candidate/ready` event: the extension shows SKILL.md from the
 * event's hunks and every other changed file from these.
 */
import { dirname, join } from 'node:path';
import type { CandidateFile } from '../../../protocol/events';
import { writeJsonAtomic } from '../../store/atomic';
import { STEP_FILE } from '../../store/layout';
import { artifactSchemas, readArtifact } from '../../store/runSchemas';
import { lineHunks, unifiedDiff } from '../hunks';
import { isPackageText, SKILL_FILE, splitPackage } from './text';

export interface PackageChange {
  path: string;
  status: 'added' | 'changed';
  before: string;
  after: string;
}

/** The files that differ between two versions of a package (SKILL.md first). */
export function packageChanges(previous: string, candidate: string): PackageChange[] {
  const a = splitPackage(previous);
  const b = splitPackage(candidate);
  const out: PackageChange[] = [];
  if (a.skill !== b.skill) out.push({ path: SKILL_FILE, status: 'changed', before: a.skill, after: b.skill });
  for (const f of b.files) {
    const old = a.files.find((x) => x.path === f.path);
    if (!old) out.push({ path: f.path, status: 'added', before: '', after: f.text });
    else if (old.text !== f.text)
      out.push({ path: f.path, status: 'changed', before: old.text, after: f.text });
  }
  return out;
}

/** `candidate_files.json` of a candidate file (beside it, in its step or epoch-end stage folder). */
export function candidateFilesPath(candidatePath: string): string {
  return join(dirname(candidatePath), STEP_FILE.candidateFiles);
}

/**
 * The changed files of a package candidate as recordCandidateFiles wrote them (SKILL.md first when
 * it changed); undefined for a single-file candidate, which has no such file.
 */
export function readCandidateFiles(candidatePath: string): PackageChange[] | undefined {
  const rows = readArtifact<Array<PackageChange & { diff: string }>>(
    candidateFilesPath(candidatePath),
    artifactSchemas.candidateFiles,
  );
  return rows?.map(({ path, status, before, after }) => ({ path, status, before, after }));
}

/**
 * For a package candidate: writes `candidate_files.json` beside the candidate file and returns the
 * per-file hunks for the event; undefined (nothing written) for a single-file skill.
 */
export function recordCandidateFiles(
  candidatePath: string,
  previous: string,
  candidate: string,
): CandidateFile[] | undefined {
  if (!isPackageText(previous) && !isPackageText(candidate)) return undefined;
  const changes = packageChanges(previous, candidate);
  writeJsonAtomic(
    candidateFilesPath(candidatePath),
    changes.map((c) => ({
      ...c,
      diff: unifiedDiff(c.before, c.after, { before: `before/${c.path}`, after: `after/${c.path}` }),
    })),
  );
  return changes.map((c) => ({ path: c.path, status: c.status, hunks: lineHunks(c.before, c.after) }));
}
