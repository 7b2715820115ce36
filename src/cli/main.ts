import { SkillOptError } from '../engine/errors';
import { VERSION } from '../protocol/vocabulary';
import { runApplyEdits } from './commands/applyEdits';
import { runEval } from './commands/eval';
import { runTrain } from './commands/train';
import { runValidate } from './commands/validate';
import { ExitCode, UsageError } from './exit';

const help = `skillopt: train agent skill documents against scored tasks (SkillOpt, arXiv 2605.23904)

Usage:
  skillopt validate <config> [--smoke] [--json] [--cfg-options k=v ...]   check config, tasks and skill
  skillopt train <config> [--out DIR] [--resume] [--fresh] [--json] [--cfg-options k=v ...] [legacy flags]
  skillopt eval <config> --skill FILE [--split train|val|test|all] [--out DIR] [--json]
  skillopt apply-edits --skill FILE --edits EDITS.json [--json] [--anchor-mode strict|reference]
  skillopt --help | --version

Options:
  --cfg-options k=v ...   override config keys, e.g. train.num_epochs=2 optimizer.learning_rate=3
  --out DIR               run folder (default: env.out_root, else .skillopt/runs/<name>_<timestamp>)
  --resume                continue the run in --out (also the default when --out holds a run)
  --fresh                 start over in --out, deleting the previous run there
  --json                  one JSON event per line on stdout (for machines)
  --smoke                 validate only: then run ONE train task through the target with the skill
                          (never the optimizer; nothing kept); exit 1 if the target errors

Exit codes: 0 done, 1 failed, 2 bad command line, 3 stopped by a budget cap, 130 stopped by Ctrl-C.`;

export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(help + '\n');
    return command ? ExitCode.Ok : ExitCode.Usage;
  }
  if (command === '--version') {
    process.stdout.write(`skillopt ${VERSION}\n`);
    return ExitCode.Ok;
  }
  try {
    switch (command) {
      case 'validate':
        return await runValidate(rest);
      case 'train':
        return await runTrain(rest);
      case 'eval':
        return await runEval(rest);
      case 'apply-edits':
        return runApplyEdits(rest);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`skillopt: ${err.message}\nRun "skillopt --help" for usage.\n`);
      return ExitCode.Usage;
    }
    if (SkillOptError.is(err)) {
      process.stderr.write(`skillopt: ${err.message}\n`);
      return ExitCode.Failed;
    }
    process.stderr.write(
      `skillopt: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    return ExitCode.Failed;
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
