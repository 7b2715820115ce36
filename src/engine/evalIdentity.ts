/**
 * An eval-only folder resumes per item (rows in `results.jsonl` are answers already paid for), so
 * it must only ever resume the same evaluation: the same skill text, split, target and settings,
 * on the same tasks. The first process records what it evaluates; a later one with anything else
 * is refused before it spends, instead of scoring one skill with another's answers.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { imagesDigest } from './data/digest';
import type { TaskItem } from './data/tasks';
import { SkillOptError } from './errors';
import { canonicalJson } from './llm/cache';
import type { PreparedRun } from './run';
import { writeJsonAtomic } from './store/atomic';
import { EVAL_FILE, RUN_DIR, RUN_FILE, RunLayout } from './store/layout';
import { isRunFolder } from './store/runReader';
import { evalIdentitySchema, readRunJson } from './store/runSchemas';

export interface EvalIdentity {
  skill: string;
  split: string;
  target: string;
  digest: string;
  /**
   * The bytes of the images the tasks show (DocVQA's pages), apart from the digest so that a
   * folder recorded before they counted still resumes; absent when no task shows one.
   */
  images?: string;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function evalIdentity(
  prepared: PreparedRun,
  what: { skill: string; skillPath: string; split: string; aa?: number; items: readonly TaskItem[] },
): EvalIdentity {
  const { model, env } = prepared.config;
  // The optimizer answers nothing in an evaluation: its settings may change freely.
  const targetSettings = Object.fromEntries(
    Object.entries(model).filter(([k]) => !k.startsWith('optimizer')),
  );
  const material = {
    skill: sha256(what.skill),
    split: what.split,
    aa: what.aa,
    // Each A/A run samples every item evaluation.repeats times: another count is another check.
    aa_repeats: what.aa && prepared.settings.repeats > 1 ? prepared.settings.repeats : undefined,
    target: targetSettings,
    // The data, its split and the scorer (the rows carry their scores).
    env,
    items: sha256(canonicalJson(what.items)),
  };
  const images = imagesDigest(what.items);
  return {
    skill: what.skillPath,
    split: what.split,
    target: prepared.models.describe.target,
    digest: sha256(canonicalJson(material)),
    ...(images ? { images } : {}),
  };
}

/** What `outDir` holds: the evaluation it records, and whether it has answers (a ledger). */
function heldIn(outDir: string): { recorded?: EvalIdentity; answered: boolean } {
  const layout = new RunLayout(outDir);
  const recorded = readRunJson(layout.file(EVAL_FILE.identity), evalIdentitySchema);
  return { ...(recorded ? { recorded } : {}), answered: existsSync(layout.file(RUN_FILE.ledger)) };
}

function sameEvaluation(recorded: EvalIdentity, id: EvalIdentity): boolean {
  // A record without `images` was made before image bytes counted: its paths still had to match.
  return recorded.digest === id.digest && (recorded.images === undefined || recorded.images === id.images);
}

/**
 * Whether `outDir` may hold the evaluation `id`: `same` when it records it (a stopped one, to go
 * on with), `free` when it holds no evaluation yet, `other` when claimEvalFolder would refuse it
 * (another evaluation, or answers that do not say what they evaluated).
 */
function evalFolderFits(outDir: string, id: EvalIdentity): 'same' | 'free' | 'other' {
  const { recorded, answered } = heldIn(outDir);
  if (recorded) return sameEvaluation(recorded, id) ? 'same' : 'other';
  return answered ? 'other' : 'free';
}

/**
 * The default folder of an evaluation: `base` unless it holds another evaluation (the skill file
 * was trained further since, say), then the first of `base_2`, `base_3`, … that holds this one
 * or none; a stopped evaluation of the same skill is found again wherever it went.
 */
export function defaultEvalFolder(base: string, id: EvalIdentity): string {
  let free: string | undefined;
  for (let n = 1; ; n++) {
    const dir = n === 1 ? base : `${base}_${n}`;
    // Folders are taken in order: past the first one never made, none holds this evaluation.
    if (!existsSync(dir)) return free ?? dir;
    const fits = evalFolderFits(dir, id);
    if (fits === 'same') return dir;
    if (fits === 'free') free ??= dir;
  }
}

/** Records `id` in a new evaluation folder; refuses a folder that holds another evaluation. */
export function claimEvalFolder(outDir: string, id: EvalIdentity): void {
  const layout = new RunLayout(outDir);
  const file = layout.file(EVAL_FILE.identity);
  // A training run's own folder: its evaluations would mix with the run's files, and the advice
  // below ("delete this one") would lose the run.
  if (isRunFolder(outDir)) {
    throw new SkillOptError('config', "is a training run's folder, not one for an evaluation", {
      file: outDir,
      fix: `give --out another folder, or leave --out out with a --skill inside this run (e.g. its ${RUN_FILE.bestSkill}): the evaluation then goes to ${join(outDir, RUN_DIR.evalOnly, '<skill>_<split>')}`,
    });
  }
  const fits = evalFolderFits(outDir, id);
  if (fits === 'same') return;
  const { recorded } = heldIn(outDir);
  if (fits === 'other' && recorded) {
    const what =
      recorded.skill !== id.skill
        ? `the skill ${recorded.skill}`
        : recorded.split !== id.split
          ? `the ${recorded.split} split`
          : recorded.target !== id.target
            ? `the target ${recorded.target}`
            : recorded.digest === id.digest
              ? `${recorded.skill} on other images (the bytes of an image the tasks show have changed since)`
              : `${recorded.skill} as it was then (the skill's text, the tasks or the target's settings have changed since)`;
    throw new SkillOptError(
      'config',
      `holds an evaluation of ${what}; going on in it would score this one with that one's answers`,
      { file, fix: 'evaluate into another folder (--out), or delete this one to start it again' },
    );
  }
  // A folder that has answers but no record (an older version's) cannot be checked.
  if (fits === 'other')
    throw new SkillOptError(
      'config',
      `has an evaluation in it that does not record what it evaluated (no ${EVAL_FILE.identity})`,
      { file: outDir, fix: 'evaluate into another folder (--out), or delete this one to start it again' },
    );
  writeJsonAtomic(file, id);
}
