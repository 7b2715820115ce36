import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { SkillOptError } from '../../engine/errors';
import { applyEdits, type Edit } from '../../engine/skill/applyEdits';
import { unifiedDiff } from '../../engine/skill/hunks';
import { ExitCode, UsageError } from '../exit';

function readEdits(path: string): Edit[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new SkillOptError(
      'config',
      `cannot read edits: ${err instanceof Error ? err.message : String(err)}`,
      {
        file: path,
        fix: 'pass a JSON array of edits, or an object with an "edits" array',
      },
    );
  }
  const list = Array.isArray(parsed)
    ? parsed
    : parsed && typeof parsed === 'object' && Array.isArray((parsed as { edits?: unknown }).edits)
      ? (parsed as { edits: unknown[] }).edits
      : undefined;
  if (!list) {
    throw new SkillOptError('config', 'no edits found', {
      file: path,
      fix: 'the file must be a JSON array of edits, or an object with an "edits" array',
    });
  }
  return list.map((e, i) => {
    if (!e || typeof e !== 'object' || typeof (e as { op?: unknown }).op !== 'string') {
      throw new SkillOptError('config', `edit ${i + 1} has no "op"`, {
        file: path,
        key: `edits[${i}]`,
        fix: 'each edit needs "op": append | insert_after | replace | delete',
      });
    }
    return e as Edit;
  });
}

/** `skillopt apply-edits`: the deterministic update stage on its own, for scripts and debugging. */
export function runApplyEdits(args: readonly string[]): number {
  const { values } = parseArgs({
    args: [...args],
    options: {
      skill: { type: 'string' },
      edits: { type: 'string' },
      json: { type: 'boolean', default: false },
      'anchor-mode': { type: 'string', default: 'strict' },
    },
    allowPositionals: false,
  });
  if (!values.skill || !values.edits)
    throw new UsageError('apply-edits needs --skill FILE and --edits EDITS.json');
  const mode = values['anchor-mode'];
  if (mode !== 'strict' && mode !== 'reference')
    throw new UsageError('--anchor-mode must be strict or reference');
  const skill = readFileSync(values.skill, 'utf8');
  const { text, report } = applyEdits(skill, readEdits(values.edits), { anchorMode: mode });
  if (values.json) {
    process.stdout.write(JSON.stringify({ skill: text, report }) + '\n');
    return ExitCode.Ok;
  }
  process.stdout.write(text.endsWith('\n') ? text : text + '\n');
  process.stderr.write('\nApply report:\n');
  for (const row of report) {
    process.stderr.write(
      `  ${String(row.index).padStart(2)}. ${row.op.padEnd(12)} ${row.status}${row.occurrences ? ` (${row.occurrences} occurrences)` : ''}\n`,
    );
  }
  const diff = unifiedDiff(skill, text, { before: values.skill, after: `${values.skill} (edited)` });
  if (diff.trim()) process.stderr.write('\n' + diff + (diff.endsWith('\n') ? '' : '\n'));
  return ExitCode.Ok;
}
