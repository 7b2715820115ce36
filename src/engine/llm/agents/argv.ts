import { SkillOptError } from '../../errors';

const SHELL_ONLY = new Set(['|', '&', ';', '<', '>', '`']);
/** Characters a backslash escapes outside quotes; elsewhere it stays literal (Windows paths). */
const ESCAPABLE = new Set(['\\', "'", '"', ' ', '\t', '\n', '$', '|', '&', ';', '<', '>', '`', '(', ')']);

/** Splits a command string into argv the way a POSIX shell would quote it, without expansions. */
export function splitCommand(command: string): string[] {
  const bad = (problem: string): SkillOptError =>
    new SkillOptError('config', problem, {
      key: 'model.target_command',
      fix: 'the command runs without a shell: write one program and its arguments, and use {task_file}, {skill_file}, {workspace} or {prompt} instead of shell tricks',
    });
  const args: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  while (i < command.length) {
    const ch = command[i];
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r') {
      if (inWord) args.push(word);
      word = '';
      inWord = false;
      i++;
    } else if (ch === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) throw bad(`Unterminated single quote in target command: ${command}`);
      word += command.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (ch === '"') {
      inWord = true;
      i++;
      for (;;) {
        if (i >= command.length) throw bad(`Unterminated double quote in target command: ${command}`);
        const c = command[i];
        if (c === '"') break;
        if (c === '$' && command[i + 1] === '(') throw bad('Command substitution "$(...)" is not supported');
        if (c === '`') throw bad('Command substitution with backquotes is not supported');
        if (c === '\\' && i + 1 < command.length && '"\\$`'.includes(command[i + 1])) {
          word += command[i + 1];
          i += 2;
          continue;
        }
        word += c;
        i++;
      }
      i++;
    } else if (ch === '\\' && i + 1 < command.length && ESCAPABLE.has(command[i + 1])) {
      word += command[i + 1];
      inWord = true;
      i += 2;
    } else if (SHELL_ONLY.has(ch) || (ch === '$' && command[i + 1] === '(')) {
      throw bad(`"${ch === '$' ? '$(' : ch}" in the target command needs a shell, which is not used`);
    } else {
      word += ch;
      inWord = true;
      i++;
    }
  }
  if (inWord) args.push(word);
  if (args.length === 0 || args[0] === '') throw bad('The target command is empty');
  return args;
}
