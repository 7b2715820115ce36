/**
 * `optimizer.package_edits`: which files of a skill package the optimizer may change or add. An
 * edit outside it is refused with the reason and recorded in the apply report, never dropped.
 */
import { minimatch } from 'minimatch';
import { isLeftOut, LEFT_OUT_DIRS, PACKAGE_TEXT_FILE_MAX, SKILL_RESOURCE_DIRS } from './folder';
import { packageFileCount, SKILL_FILE, splitPackage } from './text';

export interface PackageEditPolicy {
  /** Globs of the paths an edit may change or create (relative to the skill folder). */
  editable: string[];
  /** Globs never changed, even when `editable` matches. */
  readOnly: string[];
  /** The most files the package may hold after an edit adds one: SKILL.md and read-only files count. */
  maxFiles: number;
  /** The largest a changed or added file may become, in bytes (UTF-8). */
  maxFileBytes: number;
  /**
   * The skill was given as a folder: files may be added even while it holds SKILL.md alone (its
   * text is then the single-file text, so the text cannot tell).
   */
  folder?: boolean;
}

export const DEFAULT_PACKAGE_POLICY: PackageEditPolicy = {
  editable: [SKILL_FILE, 'references/**'],
  readOnly: [],
  maxFiles: 50,
  maxFileBytes: 32 * 1024,
};

const SAFE_PATH = /^(?:[A-Za-z0-9_][A-Za-z0-9._-]*\/)*[A-Za-z0-9_][A-Za-z0-9._-]*$/;

const matches = (path: string, globs: readonly string[]): boolean =>
  globs.some((g) => minimatch(path, g, { dot: false }));

/** Why an edit of `path` is refused, or undefined when the policy allows it. */
export function refusalFor(path: string, policy: PackageEditPolicy): string | undefined {
  if (!SAFE_PATH.test(path) || path.split('/').includes('..'))
    return `"${path}" is not a relative path inside the skill folder (letters, digits, ".", "_", "-", "/")`;
  // A file anywhere else would not be read back (resume, best_skill/, eval): the skill is these only.
  if (path !== SKILL_FILE && !SKILL_RESOURCE_DIRS.some((dir) => path.startsWith(`${dir}/`)))
    return `${path} is not in ${SKILL_RESOURCE_DIRS.join('/, ')}/: only SKILL.md and those folders are part of a skill`;
  if (path.split('/').some(isLeftOut))
    return `${path} is in a folder that is not part of the skill (${LEFT_OUT_DIRS.join('/, ')}/)`;
  if (matches(path, policy.readOnly)) return `${path} is read-only under optimizer.package_edits.read_only`;
  if (!matches(path, policy.editable))
    return `${path} is not editable under optimizer.package_edits.editable (${policy.editable.join(', ')})`;
  return undefined;
}

/**
 * Why a new file at `path` cannot sit beside the package's `existing` files, or undefined: a path
 * through one of them (`references/guide.md/x.md`), a folder holding some (`references/guide.md`
 * when `references/guide.md/…` exists), or one differing only in case, which a case-insensitive
 * disk (macOS, Windows) would write over.
 */
export function collisionFor(path: string, existing: readonly string[]): string | undefined {
  const lower = path.toLowerCase();
  for (const other of existing) {
    const o = other.toLowerCase();
    if (lower.startsWith(`${o}/`)) return `${path} would be inside ${other}, which is a file`;
    if (o.startsWith(`${lower}/`)) return `${path} is a folder of the skill (it holds ${other})`;
    if (o === lower) return `${path} differs from ${other} only in case (one file on macOS and Windows)`;
  }
  return undefined;
}

/** The size rule for a file an edit produced. */
export function sizeRefusal(path: string, text: string, policy: PackageEditPolicy): string | undefined {
  const bytes = Buffer.byteLength(text, 'utf8');
  const max = Math.min(policy.maxFileBytes, PACKAGE_TEXT_FILE_MAX);
  return bytes > max
    ? `${path} would be ${bytes} bytes, over optimizer.package_edits.max_file_bytes (${max})`
    : undefined;
}

/** The policy of the config section `optimizer.package_edits`, for a skill given as a folder or not. */
export function policyFromConfig(
  cfg: {
    editable: string[];
    read_only: string[];
    max_files: number;
    max_file_bytes: number;
  },
  folder: boolean,
): PackageEditPolicy {
  return {
    editable: [...cfg.editable],
    readOnly: [...cfg.read_only],
    maxFiles: cfg.max_files,
    maxFileBytes: cfg.max_file_bytes,
    ...(folder ? { folder } : {}),
  };
}

/**
 * One notice per `editable` / `read_only` glob of `optimizer.package_edits` that can match nothing
 * an edit may change (SKILL.md or a file in references/, scripts/, assets/): such a glob would
 * otherwise do nothing unsaid.
 */
export function policyGlobNotices(cfg: { editable: string[]; read_only: string[] }): string[] {
  const canMatch = (glob: string): boolean => {
    if (minimatch(SKILL_FILE, glob)) return true;
    const first = glob.split('/')[0] ?? '';
    return (
      glob.includes('/') &&
      (/[*?[{]/.test(first) || (SKILL_RESOURCE_DIRS as readonly string[]).includes(first))
    );
  };
  return (['editable', 'read_only'] as const).flatMap((key) =>
    cfg[key]
      .filter((g) => !canMatch(g))
      .map(
        (g) =>
          `optimizer.package_edits.${key}: "${g}" matches nothing an edit may change (only SKILL.md and files in ${SKILL_RESOURCE_DIRS.join('/, ')}/ are part of a skill, relative to its folder)`,
      ),
  );
}

/**
 * The notices of `optimizer.package_edits` for a skill folder (its loop text): globs that match
 * nothing, and a folder that already holds `max_files` files or more (SKILL.md and read-only files
 * count), where the limit lets no edit add a file.
 */
export function packagePolicyNotices(
  cfg: { editable: string[]; read_only: string[]; max_files: number },
  skillText: string,
): string[] {
  const files = packageFileCount(splitPackage(skillText));
  const maxFiles = cfg.max_files;
  if (files < maxFiles) return policyGlobNotices(cfg);
  return [
    ...policyGlobNotices(cfg),
    `optimizer.package_edits.max_files: the skill folder already has ${files} files (SKILL.md included), so no edit may add one (the limit is ${maxFiles}; raise it to let the optimizer add reference files)`,
  ];
}
