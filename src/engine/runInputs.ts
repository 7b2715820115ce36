/** A run's inputs read from the config before anything is spent: the skill to train and the task splits. */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { LoadedConfig } from './config/load';
import type { SkillOptConfig } from './config/schema';
import type { Benchmark } from './data/benchmarks';
import { defaultSplitOutputDir, effectiveSplitSeed } from './data/splitRatio';
import { loadSplitDir, materializeRatioSplit, type LoadedSplits } from './data/splits';
import { SkillOptError } from './errors';
import { checkSkillMarkers } from './skill/markers';
import { isSkillFolder } from './skill/package/folder';
import { skillBody } from './skill/package/text';
import { readSkillInit } from './skill/skillFile';

export function loadSkill(
  cfg: SkillOptConfig,
  loaded: LoadedConfig,
): { path: string; text: string; notices: string[] } {
  const path = cfg.env.skill_init;
  if (!path) {
    throw new SkillOptError('config', 'no skill to train', {
      file: loaded.files[0],
      key: 'env.skill_init',
      fix: 'set env.skill_init to the SKILL.md to optimize',
    });
  }
  if (!existsSync(path)) {
    // The reference silently starts from a blank skill here; a typo should not cost a run.
    const origin = loaded.locate('env.skill_init');
    throw new SkillOptError('skill', `skill file not found: ${path}`, {
      ...(origin?.file ? { file: origin.file } : {}),
      ...(origin?.line ? { line: origin.line } : {}),
      key: 'env.skill_init',
      // Where a relative value was resolved from (config/load.ts resolveConfigPath): the file that set
      // it, or the working folder for --cfg-options and flags.
      fix: `point env.skill_init at an existing Markdown file or skill folder (${
        origin?.dir
          ? `a relative path is relative to the config file that sets it, ${origin.file}`
          : `a relative path given on the command line is relative to the working folder (${loaded.cwd}); give an absolute path to be sure`
      })`,
    });
  }
  const { text, notices } = readSkillInit(path, cfg.env.max_skill_bytes);
  checkSkillMarkers(skillBody(text), path);
  return { path, text, notices };
}

export function loadData(
  cfg: SkillOptConfig,
  outDir: string,
  dryRun: boolean,
  bench: Benchmark | undefined,
  imageDirs: readonly string[],
): LoadedSplits {
  const env = cfg.env;
  const scorerType = typeof env.scorer === 'string' ? env.scorer : env.scorer.type;
  const common = {
    limit: env.limit,
    testEvaluation: cfg.evaluation.eval_test,
    imageDirs,
    scorerSeesFields: scorerType === 'module' || scorerType === 'command',
    ...(bench?.mapRecord ? { mapRecord: bench.mapRecord } : {}),
  };
  if (env.split_mode === 'split_dir') {
    if (!env.split_dir) {
      throw new SkillOptError('config', 'split_mode is split_dir but no split_dir is set', {
        key: 'env.split_dir',
        fix: 'set env.split_dir to a folder with train/, val/ and test/',
      });
    }
    return loadSplitDir({ splitDir: env.split_dir, ...common });
  }
  if (!env.data_path) {
    // skill-creator keeps a skill's evals beside it: named, so it is one line to use them.
    const skillDir =
      !env.skill_init || isSkillFolder(env.skill_init) ? env.skill_init : dirname(env.skill_init);
    const evals = skillDir ? join(skillDir, 'evals', 'evals.json') : '';
    throw new SkillOptError('config', 'no task data', {
      key: 'env.data_path',
      fix:
        evals && existsSync(evals)
          ? `set env.data_path: ${evals} (the skill-creator evals in your skill folder, read as they are)`
          : 'set env.data_path to a JSONL/JSON/CSV/YAML task file (ratio mode), or use split_mode: split_dir with env.split_dir',
    });
  }
  const name = env.name || basename(env.data_path).replace(/\.[^.]+$/, '');
  const seed = effectiveSplitSeed(env.split_seed, cfg.train.seed);
  const outputDir = dryRun
    ? mkdtempSync(join(tmpdir(), 'skillopt-validate-'))
    : env.split_output_dir || defaultSplitOutputDir(outDir, name, env.split_ratio, seed);
  try {
    return materializeRatioSplit({
      dataPath: env.data_path,
      outputDir,
      ratio: env.split_ratio,
      seed,
      ...common,
      ...(bench?.readRaw ? { readRaw: bench.readRaw } : {}),
      // Written by the run once its folder is checked (train/sameData.ts, evalRun.ts).
      deferWrite: !dryRun,
    });
  } finally {
    if (dryRun) rmSync(outputDir, { recursive: true, force: true });
  }
}
