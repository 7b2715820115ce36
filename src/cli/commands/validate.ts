import { dollarCapNotice } from '../../engine/dollarCap';
import { describeGatePower, GATE_OFF_TEXT } from '../../protocol/gateText';
import { gatePower } from '../../engine/train/gateSettings';
import { splitPackage } from '../../engine/skill/package/text';
import { describeCostLines, estimateCost } from '../../engine/costEstimate';
import { SkillOptError } from '../../engine/errors';
import type { Logger } from '../../engine/log';
import { preparedDataDigest, prepareRun, type PreparedRun } from '../../engine/run';
import { refuseOutFolder } from '../../engine/train/sameRun';
import type { TrainSettings } from '../../engine/train/settings';
import { prepareSmoke, smokePrepared, type SmokeResult } from '../../engine/smoke';
import { ExitCode } from '../exit';
import { cfgOptionsFlag, type CommandSpec, configFlag, jsonFlag, verboseFlag } from '../args';
import { cliModels, parseCommon, stderrLogger } from './common';
import { renderSmoke, smokeError, smokeErrorLine } from './smoke';
import { onStopSignals } from '../stopSignals';

export const validateSpec: CommandSpec = {
  name: 'validate',
  usage: 'skillopt validate <config> [options] [--cfg-options k=v ...] [legacy flags]',
  summary: 'check config, tasks and skill; calls no model and writes nothing',
  flags: [
    configFlag,
    {
      name: 'smoke',
      type: 'boolean',
      help: 'then run ONE train task through the target (never the optimizer); exit 1 if it errors',
    },
    {
      name: 'out',
      type: 'string',
      value: 'DIR',
      help: 'the run folder a train would use (checked, not written)',
    },
    cfgOptionsFlag,
    jsonFlag,
    verboseFlag,
  ],
  legacy: true,
  examples: ['skillopt validate skillopt.yaml', 'skillopt validate skillopt.yaml --smoke'],
};

/**
 * `skillopt validate`: load and check everything a run needs; call no model, write nothing.
 * `--smoke` then runs one train task through the target (never the optimizer): exit 1 when the
 * target errors, 0 when it answers, right or wrong.
 */
export async function runValidate(args: readonly string[]): Promise<number> {
  const a = parseCommon(args, validateSpec);
  const smoke = a.values.smoke === true;
  const options = {
    configPath: a.config,
    overrides: a.overrides,
    legacyArgs: a.legacyArgs,
    models: cliModels,
    ...(typeof a.values.out === 'string' ? { outDir: a.values.out } : {}),
    logger: quietCallFailures(stderrLogger(a.values.verbose ? 'debug' : 'warn'), smoke),
  };
  const prepared = smoke ? prepareSmoke(options) : prepareRun({ ...options, dryRun: true });
  try {
    // validate checks a training run: its dollar cap is refused or explained here, before any call.
    const capNotice = dollarCapNotice(prepared, 'train');
    if (capNotice) prepared.warnings.push(capNotice);
    // --out naming a run: what train would refuse about it (another config) is refused here too.
    if (typeof a.values.out === 'string') {
      refuseOutFolder(prepared.outDir, prepared.flatConfig, preparedDataDigest(prepared));
    }
    const report = validateReport(prepared);
    if (!smoke) {
      process.stdout.write(
        a.json
          ? JSON.stringify(report) + '\n'
          : [...reportLines(prepared), 'Nothing was run and nothing was spent.'].join('\n') + '\n',
      );
      return ExitCode.Ok;
    }
    if (!a.json) process.stdout.write(reportLines(prepared).join('\n') + '\n');
    const result = await runSmoke(prepared);
    if (result === 'cancelled') return ExitCode.Interrupted;
    const failed = result.outcome === 'errored';
    // With --json the failure is the report's `error`, as every --json error is: one object, no stderr line.
    process.stdout.write(
      a.json
        ? JSON.stringify({ ...report, smoke: result, ...(failed ? { error: smokeError(result) } : {}) }) +
            '\n'
        : renderSmoke(result).join('\n') + '\n',
    );
    if (failed) {
      if (!a.json) process.stderr.write(`skillopt: ${smokeErrorLine(result)}\n`);
      return ExitCode.Failed;
    }
    return ExitCode.Ok;
  } finally {
    await prepared.models.close();
  }
}

/**
 * The smoke report states a failed target call with its kind and fix; the model client's and the
 * agent backend's own log lines of that failure would say it again, without the fix.
 */
function quietCallFailures(logger: Logger, smoke: boolean): Logger {
  if (!smoke) return logger;
  return {
    log(level, component, message) {
      if (component === 'llm' && level === 'error') return;
      if (component === 'command' && /^task .*: errored \(/.test(message)) return;
      logger.log(level, component, message);
    },
  };
}

/** The smoke run, stopped cleanly by Ctrl-C (the throwaway folder is removed either way). */
async function runSmoke(prepared: PreparedRun): Promise<SmokeResult | 'cancelled'> {
  const controller = new AbortController();
  const onSigint = (): void => controller.abort();
  const offStopSignals = onStopSignals(onSigint);
  try {
    return await smokePrepared(prepared, { signal: controller.signal });
  } catch (err) {
    if (SkillOptError.is(err, 'cancelled')) {
      process.stderr.write('skillopt: smoke run stopped by Ctrl-C; nothing was written\n');
      return 'cancelled';
    }
    throw err;
  } finally {
    offStopSignals();
  }
}

function validateReport(prepared: PreparedRun): Record<string, unknown> {
  return {
    config: prepared.loaded.files[0],
    skill: prepared.skillPath,
    skill_chars: prepared.initialSkill.length,
    splits: {
      train: prepared.splits.train.length,
      val: prepared.splits.val.length,
      test: prepared.splits.test.size,
    },
    steps_per_epoch: prepared.stepsPerEpoch,
    total_steps: prepared.totalSteps,
    optimizer: prepared.models.describe.optimizer,
    target: prepared.models.describe.target,
    scorer: prepared.scorer.name,
    update_mode: prepared.settings.updateMode,
    estimated_model_calls: prepared.estimate,
    estimated_cost: estimateCost(prepared),
    warnings: prepared.warnings,
  };
}

/** What the no-skill baseline costs, or why it is not scored. */
function noSkillLine(prepared: PreparedRun): string {
  const calls = prepared.estimate.once.no_skill;
  if (calls !== undefined)
    return `the target alone is scored on selection and test at the end (${calls} calls; evaluation.no_skill_baseline: false skips it)`;
  return prepared.settings.noSkillBaseline
    ? 'not scored: evaluation.eval_test is false (nothing is scored at the end)'
    : 'not scored (evaluation.no_skill_baseline: false)';
}

/** Characters of a single-file skill; a skill folder's files too. */
function skillSize(text: string): string {
  const pkg = splitPackage(text);
  const others = pkg.files.length + pkg.readOnly.length;
  if (!others) return `${text.length} chars`;
  return `SKILL.md ${pkg.skill.length} chars, ${pkg.files.length} text file(s) trained, ${pkg.readOnly.length} read-only`;
}

function reportLines(prepared: PreparedRun): string[] {
  const s = prepared.settings;
  return [
    `Config ${prepared.loaded.files[0]}: OK`,
    `  skill     ${prepared.skillPath} (${skillSize(prepared.initialSkill)})`,
    `  tasks     train ${prepared.splits.train.length}, selection ${prepared.splits.val.length}, test ${prepared.splits.test.size}`,
    `  schedule  ${s.numEpochs} epoch(s) × ${prepared.stepsPerEpoch} step(s) = ${prepared.totalSteps} steps, batch ${s.batchSize}, minibatch ${s.minibatchSize}, ${s.updateMode} mode, ${s.updateMode === 'full_rewrite_minibatch' ? 'no edit budget (whole rewrites)' : `edit budget ${s.lrScheduler} ${s.learningRate}→${s.minLearningRate}`}`,
    `  optimizer ${prepared.models.describe.optimizer}`,
    `  target    ${prepared.models.describe.target}`,
    `  scorer    ${prepared.scorer.name}`,
    `  would run at most ~${prepared.estimate.total} model calls (per step: ${Object.entries(
      prepared.estimate.perStep,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')})`,
    ...describeCostLines(estimateCost(prepared)).map((l) => `  ${l}`),
    // The power check: what the selection split can tell apart, before anything is spent.
    `  gate      ${gateLine(s, prepared.splits.val.length)}`,
    `  no skill  ${noSkillLine(prepared)}`,
    ...prepared.warnings.map((w) => `  warning: ${w}`),
  ];
}

/** The gate as the run will use it: off (use_gate: false), or its test and power, on which score. */
function gateLine(s: TrainSettings, selectionItems: number): string {
  const power = gatePower(s, selectionItems);
  if (!power) return GATE_OFF_TEXT;
  const metric =
    s.gateMetric === 'hard'
      ? ''
      : ` (on the ${s.gateMetric} score${s.gateMetric === 'mixed' ? `, soft weight ${s.gateMixedWeight}` : ''})`;
  return `${describeGatePower(power)}${metric}`;
}
