import { SkillOptError } from '../engine/errors';
import { VERSION } from '../protocol/vocabulary';
import { type CommandSpec, nearest, renderHelp, wantsHelp, wantsJson } from './args';
import { applyEditsSpec, runApplyEdits } from './commands/applyEdits';
import { evalSpec, runEval } from './commands/eval';
import { runTrain, trainSpec } from './commands/train';
import { runValidate, validateSpec } from './commands/validate';
import { handleClosedOutput } from './closedOutput';
import { ExitCode, UsageError } from './exit';

const commands: Record<
  string,
  { spec: CommandSpec; run: (args: readonly string[]) => Promise<number> | number }
> = {
  validate: { spec: validateSpec, run: runValidate },
  train: { spec: trainSpec, run: runTrain },
  eval: { spec: evalSpec, run: runEval },
  'apply-edits': { spec: applyEditsSpec, run: runApplyEdits },
};

/** Each command's line names only flags it takes (a test checks); `<command> --help` has them all. */
export const topLevelHelp = `skillopt: train agent skill documents against scored tasks (SkillOpt, arXiv 2605.23904)

Usage:
  skillopt validate <config> [--smoke] [--out DIR] [--json] [--cfg-options k=v ...]   check config, tasks and skill (--smoke: one target call)
  skillopt train <config> [--out DIR] [--resume | --fresh | --force] [--json] [--cfg-options k=v ...] [legacy flags]
  skillopt eval <config> --skill FILE|FOLDER [--split NAME] [--out DIR] [--batch] [--aa N] [--json]
  skillopt apply-edits --skill FILE|FOLDER --edits EDITS.json [--config FILE] [--write] [--json] [--anchor-mode strict|reference]
  skillopt <command> --help      every flag of a command, with an example
  skillopt --help | --version

Options:
  --config FILE           the config, as the reference spells it (same as <config>)
  --cfg-options k=v ...   override config keys, e.g. train.num_epochs=2 optimizer.learning_rate=3
  --json                  machine-readable stdout; an error is one {"error": {reason, message, fix}} object
  --verbose               the engine's debug lines on stderr (validate, train, eval)
  --help, -h              help (top level, or for the command it follows)
  --version               print the version

Example:
  skillopt validate skillopt.yaml && skillopt train skillopt.yaml --out runs/first

Exit codes: 0 done, 1 failed, 2 bad command line, 3 stopped by a budget cap, 130 stopped by Ctrl-C.`;

export async function main(argv: readonly string[]): Promise<number> {
  handleClosedOutput();
  // `--json` before the command applies to it; with no command it still asks for a JSON error.
  const leadingJson = argv.length > 0 && wantsJson(argv.slice(0, 1));
  const [command, ...rest] = leadingJson ? [argv[1], argv[0], ...argv.slice(2)] : argv;
  if (leadingJson && !command) {
    return reportError(
      new UsageError(
        'no command given',
        `use one of ${Object.keys(commands).join(', ')} (see skillopt --help)`,
      ),
      true,
    );
  }
  if (!command || command === '--help' || command === '-h') {
    process.stdout.write(topLevelHelp + '\n');
    return command ? ExitCode.Ok : ExitCode.Usage;
  }
  if (command === '--version') {
    process.stdout.write(`skillopt ${VERSION}\n`);
    return ExitCode.Ok;
  }
  const json = wantsJson(rest);
  try {
    if (command === 'help') {
      const topic = rest[0] === undefined ? undefined : commands[rest[0]];
      if (rest[0] !== undefined && !topic) throw unknownCommand(rest[0]);
      process.stdout.write((topic ? renderHelp(topic.spec) : topLevelHelp) + '\n');
      return ExitCode.Ok;
    }
    const cmd = commands[command];
    if (!cmd) throw unknownCommand(command);
    // Checked before anything is parsed or loaded, so asking for help never starts a run.
    if (wantsHelp(rest)) {
      process.stdout.write(renderHelp(cmd.spec) + '\n');
      return ExitCode.Ok;
    }
    return await cmd.run(rest);
  } catch (err) {
    return reportError(err, json);
  }
}

function unknownCommand(name: string): UsageError {
  const near = nearest(name, Object.keys(commands));
  const all = `use one of ${Object.keys(commands).join(', ')} (see skillopt --help)`;
  return new UsageError(`unknown command "${name}"`, near ? `did you mean ${near}? (${all})` : all);
}

/** One message per error: a line on stderr, or with --json one object on stdout and nothing else. */
function reportError(err: unknown, json: boolean): number {
  // A stop on a cap or on Ctrl-C keeps its documented code with --json too (eval throws it then).
  const code =
    err instanceof UsageError
      ? ExitCode.Usage
      : SkillOptError.is(err, 'budget')
        ? ExitCode.Budget
        : SkillOptError.is(err, 'cancelled')
          ? ExitCode.Interrupted
          : ExitCode.Failed;
  let reason: string;
  let message: string;
  let fix: string | undefined;
  if (err instanceof UsageError) {
    [reason, message, fix] = ['usage', err.message, err.fix];
  } else if (SkillOptError.is(err)) {
    fix = err.place.fix;
    const suffix = fix ? `. Fix: ${fix}` : '';
    reason = err.reason;
    message = suffix && err.message.endsWith(suffix) ? err.message.slice(0, -suffix.length) : err.message;
  } else {
    // A bug, not a user error: the stack is what a bug report needs.
    reason = 'internal';
    message = `unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`;
  }
  if (json) {
    process.stdout.write(JSON.stringify({ error: { reason, message, ...(fix ? { fix } : {}) } }) + '\n');
  } else {
    process.stderr.write(`skillopt: ${message}${fix ? `. Fix: ${fix}` : ''}\n`);
  }
  return code;
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
