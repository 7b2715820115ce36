import { prepareRun } from '../../engine/run';
import { ExitCode } from '../exit';
import { cliModels, parseCommon, stderrLogger } from './common';

/** `skillopt validate`: load and check everything a run needs; call no model, write nothing. */
export async function runValidate(args: readonly string[]): Promise<number> {
  const a = parseCommon(args, { out: { type: 'string' } });
  const prepared = prepareRun({
    configPath: a.config,
    overrides: a.overrides,
    legacyArgs: a.legacyArgs,
    models: cliModels,
    ...(typeof a.values.out === 'string' ? { outDir: a.values.out } : {}),
    dryRun: true,
    logger: stderrLogger('warn'),
  });
  await prepared.models.close();
  const s = prepared.settings;
  const report = {
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
    update_mode: s.updateMode,
    estimated_model_calls: prepared.estimate,
    warnings: prepared.warnings,
  };
  if (a.json) {
    process.stdout.write(JSON.stringify(report) + '\n');
    return ExitCode.Ok;
  }
  const lines = [
    `Config ${report.config}: OK`,
    `  skill     ${report.skill} (${report.skill_chars} chars)`,
    `  tasks     train ${report.splits.train}, selection ${report.splits.val}, test ${report.splits.test}`,
    `  schedule  ${s.numEpochs} epoch(s) × ${prepared.stepsPerEpoch} step(s) = ${prepared.totalSteps} steps, batch ${s.batchSize}, minibatch ${s.minibatchSize}, ${s.updateMode} mode, edit budget ${s.lrScheduler} ${s.learningRate}→${s.minLearningRate}`,
    `  optimizer ${report.optimizer}`,
    `  target    ${report.target}`,
    `  scorer    ${report.scorer}`,
    `  would run at most ~${prepared.estimate.total} model calls (per step: ${Object.entries(
      prepared.estimate.perStep,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')})`,
    ...prepared.warnings.map((w) => `  warning: ${w}`),
    'Nothing was run and nothing was spent.',
  ];
  process.stdout.write(lines.join('\n') + '\n');
  return ExitCode.Ok;
}
