import { basename, join, resolve } from 'node:path';
import { toFlatConfig, redactSecrets } from './config/flat';
import { loadConfig, type LoadedConfig } from './config/load';
import { formatConfigWarning } from './config/schema/problems';
import type { SkillOptConfig } from './config/schema';
import { stepsPerEpoch } from './data/plan';
import { benchmarkFor } from './data/benchmarks';
import { turnsFor } from './train/turns/fromConfig';
import { maxTargetCalls, multiTurn, type TargetTurns } from './train/turns/types';
import {
  benchmarkNotices,
  idleBenchmarkKeyNotices,
  checkImageTarget,
  withBenchmarkChoices,
  withImageDetail,
} from './data/benchmarkRun';
import type { LoadedSplits } from './data/splits';
import { taskDataDigest, type TaskDataDigest } from './data/digest';
import { evalsSkillNameNotices } from './data/evalsSkillName';
import { loadData, loadSkill } from './runInputs';
import { estimateCalls, type CallEstimate } from './callEstimate';
import { SkillOptError, messageOf } from './errors';
import { dollarCapNotice } from './dollarCap';
import type { EngineEvent } from '../protocol/events';
import { silentLogger, type Logger } from './log';
import { createScorer, type Scorer } from './scoring/scorers';
import { assertionScorer } from './scoring/evalScorer';
import { checkInputFiles } from './train/inputFiles';
import { unreviewedModeNotice } from './train/humanReview';
import { checkSkillForRun } from './skill/lintForRun';
import { isSkillFolder } from './skill/package/folder';
import { packagePolicyNotices } from './skill/package/policy';
import { SKILL_FILE, skillBody } from './skill/package/text';
import { buildModels, type ModelSetup, type ModelEnvironment } from './models';
import { settingsFromConfig } from './train/fromConfig';
import type { RunContext } from './train/context';
import { Trainer, type TrainOutcome } from './train/trainer';
import type { Reviewer } from './train/review';
import { BudgetGuard } from './llm/budget';
import { tokenSummary } from './llm/tokenSummary';
import { acquireRunLock } from './store/runLock';
import { containWrites, makeDir, removeStaleTemps } from './store/atomic';
import { defaultRunsRoot, RUN_FILE, RunLayout } from './store/layout';
import { refuseOutFolder } from './train/sameRun';
import { RunLedger } from './llm/ledger';
import { streamTotals } from './llm/totalsEvents';
import { setMaxListeners } from 'node:events';
import type { TrainSettings } from './train/settings';
import { prepareActivation, withActivationCalls, type ActivationPlan } from './activation/plan';

export interface PrepareOptions {
  configPath: string;
  overrides?: readonly string[];
  legacyArgs?: readonly string[];
  cwd?: string;
  /** Run folder; default env.out_root, else `<config dir>/.skillopt/runs/<name>_<timestamp>`. */
  outDir?: string;
  /** Where ratio splits are generated when validating only (so validate writes nothing of the run). */
  dryRun?: boolean;
  models?: ModelEnvironment;
  logger?: Logger;
}

export type { CallEstimate };

export interface PreparedRun {
  loaded: LoadedConfig;
  config: SkillOptConfig;
  settings: TrainSettings;
  splits: LoadedSplits;
  skillPath: string;
  initialSkill: string;
  scorer: Scorer;
  outDir: string;
  flatConfig: Record<string, unknown>;
  stepsPerEpoch: number;
  totalSteps: number;
  warnings: string[];
  estimate: CallEstimate;
  models: ModelSetup;
  /** activation.enabled: the trigger queries and how they run (src/engine/activation/plan.ts). */
  activation?: ActivationPlan;
  /** How the target answers an item beyond one call (OfficeQA's document tools; train/turns). */
  turns?: TargetTurns;
}

function timestamp(): string {
  const d = new Date();
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}_${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

/**
 * Everything a run needs, loaded and checked before any model is called: config, skill, tasks and
 * splits, scorer, model clients (keys present, names valid). Bad input fails here with one message.
 */
export function prepareRun(opts: PrepareOptions): PreparedRun {
  const loaded = loadConfig(opts.configPath, {
    ...(opts.overrides ? { overrides: opts.overrides } : {}),
    ...(opts.legacyArgs ? { legacyArgs: opts.legacyArgs } : {}),
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  const cfg = loaded.config;
  const name = cfg.env.name || basename(loaded.configDir);
  const outDir = resolve(
    opts.outDir ?? (cfg.env.out_root || join(defaultRunsRoot(loaded.configDir), `${name}_${timestamp()}`)),
  );
  const settings = settingsFromConfig(cfg);
  // A benchmark this tool cannot run is refused before anything else is read.
  const bench = cfg.env.name ? benchmarkFor(cfg.env) : undefined;
  const skill = loadSkill(cfg, loaded);
  const imageDirs = [loaded.configDir, resolve(opts.cwd ?? process.cwd())];
  const splits = withImageDetail(
    withBenchmarkChoices(
      loadData(cfg, outDir, opts.dryRun === true, bench, imageDirs),
      bench,
      cfg.train.seed,
    ),
    cfg.env.image_detail,
  );
  if (cfg.train.train_size > 0 && cfg.train.train_size !== splits.train.length) {
    throw new SkillOptError(
      'config',
      `train_size is ${cfg.train.train_size} but the train split has ${splits.train.length} items`,
      {
        key: 'train.train_size',
        fix: 'set train.train_size to 0 (derive it from the split) or to the split size',
      },
    );
  }
  // locate() answers with the section's origin for a key the files do not set.
  const scorerSet = loaded.locate('env.scorer') !== loaded.locate('env');
  const scorerSpec = !scorerSet && bench ? bench.scorer : cfg.env.scorer;
  const baseScorer = createScorer(scorerSpec, {
    baseDir: loaded.configDir,
  });
  const spe = stepsPerEpoch(splits.train.length, settings.batchSize, settings.accumulation);
  const models = buildModels(cfg, {
    ...(opts.models ?? {}),
    tasks: [...splits.train, ...splits.val, ...splits.test.unsealForEvaluation()],
    testItems: splits.test.unsealForEvaluation(),
    logger: opts.logger ?? silentLogger,
  });
  const allTasks = [...splits.train, ...splits.val, ...splits.test.unsealForEvaluation()];
  checkInputFiles(allTasks, models.target.backend === 'command');
  const turns = turnsFor(cfg, bench?.name, models.target);
  if (multiTurn(turns.turns) && models.batch) {
    throw new SkillOptError(
      'config',
      'a provider batch sends one call per item, and these items take several',
      {
        key: 'evaluation.batch_api',
        fix: 'set evaluation.batch_api: off for this run (document tools and refinement turns call the target per turn)',
      },
    );
  }
  const scorer = assertionScorer(baseScorer, allTasks, models, settings.optimizerMaxTokens, opts.logger);
  const activation = prepareActivation(
    cfg,
    splits.triggers?.pool ?? [],
    skill.text,
    models.target.backend,
    splits.triggers?.sealed ?? [],
  );
  const imageNotices = checkImageTarget(allTasks, models.target, cfg.env.image_detail);
  // Front-matter lint for the run's target: what keeps the agent from loading the skill refuses here.
  // A skill folder is linted through its SKILL.md (its links resolve from there).
  const skillMd = isSkillFolder(skill.path)
    ? { path: join(skill.path, SKILL_FILE), text: skillBody(skill.text) }
    : skill;
  const skillNotices = [
    ...checkSkillForRun(skillMd, cfg.model, models.target.backend === 'command'),
    ...(cfg.env.split_mode !== 'split_dir' && cfg.env.data_path
      ? evalsSkillNameNotices(cfg.env.data_path, skillMd)
      : []),
  ];
  const flatConfig = redactSecrets(
    toFlatConfig(cfg, {
      train_size: splits.train.length,
      steps_per_epoch: spe,
      batches_per_epoch: spe * settings.accumulation,
      samples_per_epoch: spe * settings.accumulation * settings.batchSize,
    }),
  );
  return {
    loaded,
    config: cfg,
    settings,
    splits,
    skillPath: skill.path,
    initialSkill: skill.text,
    scorer,
    outDir,
    flatConfig,
    stepsPerEpoch: spe,
    totalSteps: spe * settings.numEpochs,
    warnings: [
      ...loaded.warnings.map(formatConfigWarning),
      ...(splits.notices ?? []),
      ...benchmarkNotices(bench, scorerSpec, cfg.env.scorer),
      ...idleBenchmarkKeyNotices(cfg.env, bench?.name),
      ...imageNotices,
      ...skill.notices,
      ...skillNotices,
      ...(isSkillFolder(cfg.env.skill_init)
        ? packagePolicyNotices(cfg.optimizer.package_edits, skill.text)
        : []),
      ...models.notices,
      ...turns.notices,
      ...activation.notices,
    ],
    estimate: withActivationCalls(
      estimateCalls(settings, splits, spe, maxTargetCalls(turns.turns)),
      activation.plan,
      settings.numEpochs,
    ),
    models,
    ...(activation.plan ? { activation: activation.plan } : {}),
    ...(turns.turns ? { turns: turns.turns } : {}),
  };
}

export interface RunHooks {
  emit: (event: EngineEvent) => void;
  signal: AbortSignal;
  logger?: Logger;
}

/** The fingerprint of the run's task data, as a run folder records it (train/sameData.ts). */
export function preparedDataDigest(prepared: PreparedRun): TaskDataDigest {
  return taskDataDigest(
    {
      train: prepared.splits.train,
      selection: prepared.splits.val,
      test: prepared.splits.test.unsealForEvaluation(),
    },
    prepared.splits.source,
  );
}

/** The context every stage receives, for a training run or eval-only. */
export function makeContext(
  prepared: PreparedRun,
  hooks: RunHooks,
  outDir: string,
  onFallback: (stage: string, reason: string) => void,
): RunContext {
  const { models } = prepared;
  return {
    settings: prepared.settings,
    optimizer: models.optimizer,
    target: models.target,
    ...(models.target.backend === 'command' ? { targetName: models.describe.target } : {}),
    scorer: prepared.scorer,
    outDir,
    signal: hooks.signal,
    logger: hooks.logger ?? silentLogger,
    emit: hooks.emit,
    ...(models.batch ? { batch: models.batch } : {}),
    ...(prepared.turns ? { turns: prepared.turns } : {}),
    recordReask: (stage) => models.accounting.recordReask(stage),
    recordFallback: (stage, reason) => {
      models.accounting.recordFallback(stage, reason);
      hooks.emit({ type: 'fallback', stage, reason });
      (hooks.logger ?? silentLogger).log(
        'warn',
        stage,
        `structured reply unusable, reference fallback applied: ${reason}`,
      );
      onFallback(stage, reason);
    },
  };
}

/** How long a stopped run waits for its calls to end (agent CLIs get 5 s to exit after SIGTERM). */
export const STOPPED_CALLS_WAIT_MS = 10_000;

/** Run (or resume) training in `prepared.outDir`. Events stream through `hooks.emit`. */
export async function trainPrepared(
  prepared: PreparedRun,
  hooks: RunHooks & {
    resumeCommand: string;
    /** How to cancel the provider batches a stop leaves out, as the caller's user would. */
    cancelBatchCommand?: string;
    reviewer?: Reviewer;
    requireResume?: boolean;
    forceConfig?: boolean;
    /** The folder holds files of the person's beside a run --fresh just cleared: not refused. */
    keepsOtherFiles?: boolean;
  },
): Promise<TrainOutcome> {
  const { models } = prepared;
  // Every in-flight model call listens on the run's signal; hundreds at once are expected.
  setMaxListeners(0, hooks.signal);
  // Every refusal comes before any notice: train's CLI makes these checks before it prints too.
  refuseOutFolder(prepared.outDir, prepared.flatConfig, preparedDataDigest(prepared), {
    requireResume: hooks.requireResume,
    force: hooks.forceConfig,
    keepsOtherFiles: hooks.keepsOtherFiles,
  });
  const capNotice = dollarCapNotice(prepared, 'train');
  if (capNotice) hooks.emit({ type: 'warning', message: capNotice });
  const limits = prepared.config.limits;
  const holder: { trainer?: Trainer } = {};
  const ctx = makeContext(prepared, hooks, prepared.outDir, (stage, reason) =>
    holder.trainer?.noteFallback(stage, reason),
  );
  const totals = streamTotals(models.accounting, hooks.emit);
  makeDir(prepared.outDir);
  let release: (() => void) | undefined;
  let detach: (() => void) | undefined;
  let uncontain: (() => void) | undefined;
  /** Why the run ended before its end (a cap, a stop, an error), for its report. */
  let stop: string | undefined;
  try {
    release = acquireRunLock(prepared.outDir);
    uncontain = containWrites(prepared.outDir);
    // A killed process may have left half-written temp files; only we may write here now.
    const stale = removeStaleTemps(prepared.outDir);
    if (stale)
      hooks.logger?.log('info', 'run', `removed ${stale} temp file(s) a stopped process left behind`);
    // Caps are per run: what earlier processes of this run paid counts (the ledger holds it).
    const ledger = new RunLedger(new RunLayout(prepared.outDir).file(RUN_FILE.ledger));
    detach = ledger.attach(models.accounting);
    const budget = new BudgetGuard(
      {
        maxTokens: limits.max_tokens,
        maxDollars: limits.max_dollars,
        maxWallSeconds: limits.max_wall_time_s,
      },
      models.accounting,
      Date.now,
      {
        onWarning: (message) => hooks.emit({ type: 'warning', message }),
        priorSeconds: ledger.priorSeconds(),
      },
    );
    const trainer = new Trainer({
      ctx,
      splits: prepared.splits,
      initialSkill: prepared.initialSkill,
      flatConfig: prepared.flatConfig,
      taskData: preparedDataDigest(prepared),
      budgetCheck: () => budget.check(),
      capReached: () => {
        const hit = budget.reached();
        return hit ? { key: hit.key, limit: hit.limit, used: hit.used } : undefined;
      },
      budgetCapped: limits.max_tokens > 0 || limits.max_dollars > 0 || limits.max_wall_time_s > 0,
      ledger,
      totalTokens: () => ({
        ...tokenSummary(models.accounting.snapshot()),
        _accounting: models.accounting.totals(),
      }),
      accountingSnapshot: () => models.accounting.snapshot(),
      resumeCommand: hooks.resumeCommand,
      ...(hooks.cancelBatchCommand ? { cancelBatchCommand: hooks.cancelBatchCommand } : {}),
      ...(hooks.forceConfig ? { forceConfig: true } : {}),
      ...(hooks.reviewer ? { reviewer: hooks.reviewer } : {}),
      ...(prepared.activation ? { activation: prepared.activation } : {}),
    });
    holder.trainer = trainer;
    const unreviewed = unreviewedModeNotice(prepared.config, hooks.reviewer !== undefined);
    if (unreviewed) hooks.emit({ type: 'warning', message: unreviewed });
    const outcome = await trainer.run();
    if (outcome.status === 'stopped') stop = outcome.reason ?? 'stopped';
    return outcome;
  } catch (err) {
    stop = `failed: ${messageOf(err)}`;
    hooks.emit({
      type: 'run/failed',
      message: messageOf(err),
      reason: SkillOptError.is(err) ? err.reason : 'internal',
    });
    throw err;
  } finally {
    // A stopped agent run reports what it spent as its process ends: wait so the ledger has it.
    if (hooks.signal.aborted) await models.accounting.settled(STOPPED_CALLS_WAIT_MS);
    if (stop !== undefined) holder.trainer?.reportStop(stop);
    totals.close();
    detach?.();
    uncontain?.();
    release?.();
  }
}
