import { writeFileSync } from 'node:fs';
import { SkillOptError } from '../../engine/errors';
import { applyEdits, type Edit } from '../../engine/skill/applyEdits';
import { unifiedDiff } from '../../engine/skill/hunks';
import { ExitCode, UsageError } from '../exit';
import { type CommandSpec, jsonFlag } from '../args';
import { parseFlags, readInputFile } from './common';

const OPS = ['append', 'insert_after', 'replace', 'delete'] as const;

export const applyEditsSpec: CommandSpec = {
  name: 'apply-edits',
  usage:
    'skillopt apply-edits --skill FILE --edits EDITS.json [--write] [--json] [--anchor-mode strict|reference]',
  summary: "apply a list of edits to a skill, exactly as a training step's update stage does",
  flags: [
    { name: 'skill', type: 'string', value: 'FILE', help: 'the skill document to edit (required)' },
    { name: 'edits', type: 'string', value: 'FILE', help: 'the edits, as JSON (required; format below)' },
    {
      name: 'write',
      type: 'boolean',
      help: 'write the result back to --skill (default: print it to stdout)',
    },
    {
      name: 'anchor-mode',
      type: 'string',
      value: 'MODE',
      help: 'strict (default) refuses an anchor found twice; reference binds it to the first, as SkillOpt does',
    },
    jsonFlag,
  ],
  legacy: false,
  notes: `Edits file: a JSON array of edits, or an object with an "edits" array (a SkillOpt patch).
Each edit has "op" (${OPS.join(' | ')}), "content" (the new text) and, except for append,
"target" (exact text in the skill that anchors it). Edits apply in order, each to the result of the last:
  {"edits": [
    {"op": "insert_after", "target": "## Rules", "content": "- Write dates as YYYY-MM-DD."},
    {"op": "replace", "target": "Be brief.", "content": "Answer in one sentence."},
    {"op": "delete", "target": "- Obsolete rule."},
    {"op": "append", "content": "## Examples\\n..."}
  ]}
The apply report (one row per edit: applied or skipped, and why) and a diff go to stderr.`,
  examples: [
    'skillopt apply-edits --skill SKILL.md --edits edits.json > new_SKILL.md',
    'skillopt apply-edits --skill SKILL.md --edits edits.json --write',
  ],
};

function readEdits(path: string): Edit[] {
  const text = readInputFile(path, 'edits file', '--edits');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new SkillOptError(
      'config',
      `not valid JSON (${err instanceof Error ? err.message : String(err)})`,
      {
        file: path,
        fix: 'pass a JSON array of edits, or an object with an "edits" array (see skillopt apply-edits --help)',
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
    const op = e && typeof e === 'object' ? (e as { op?: unknown }).op : undefined;
    if (typeof op !== 'string') {
      throw new SkillOptError('config', `edit ${i + 1} has no "op"`, {
        file: path,
        key: `edits[${i}]`,
        fix: `each edit needs "op": ${OPS.join(' | ')}`,
      });
    }
    // The training loop skips an unknown op; here a person wrote the file, so say so instead.
    if (!(OPS as readonly string[]).includes(op)) {
      throw new SkillOptError('config', `edit ${i + 1} has an unknown op "${op}"`, {
        file: path,
        key: `edits[${i}].op`,
        fix: `use one of ${OPS.join(', ')}`,
      });
    }
    return e as Edit;
  });
}

/** `skillopt apply-edits`: the deterministic update stage on its own, for scripts and debugging. */
export function runApplyEdits(args: readonly string[]): number {
  const values = parseFlags(args, applyEditsSpec);
  const skillPath = values.skill;
  const editsPath = values.edits;
  if (typeof skillPath !== 'string' || typeof editsPath !== 'string')
    throw new UsageError(
      'apply-edits needs --skill FILE and --edits EDITS.json',
      'see skillopt apply-edits --help',
    );
  const mode = values['anchor-mode'] ?? 'strict';
  if (mode !== 'strict' && mode !== 'reference')
    throw new UsageError(
      `--anchor-mode ${String(mode)} is not a mode`,
      'use --anchor-mode strict or reference',
    );
  const skill = readInputFile(skillPath, 'skill file', '--skill');
  const { text, report } = applyEdits(skill, readEdits(editsPath), { anchorMode: mode });
  const result = text.endsWith('\n') ? text : text + '\n';
  if (values.write) writeFileSync(skillPath, result);
  if (values.json) {
    process.stdout.write(
      JSON.stringify({ skill: text, report, ...(values.write ? { written: skillPath } : {}) }) + '\n',
    );
    return ExitCode.Ok;
  }
  if (!values.write) process.stdout.write(result);
  process.stderr.write(`${values.write ? '' : '\n'}Apply report:\n`);
  for (const row of report) {
    process.stderr.write(
      `  ${String(row.index).padStart(2)}. ${row.op.padEnd(12)} ${row.status}${row.occurrences ? ` (${row.occurrences} occurrences)` : ''}\n`,
    );
  }
  const diff = unifiedDiff(skill, text, { before: skillPath, after: `${skillPath} (edited)` });
  if (diff.trim()) process.stderr.write('\n' + diff + (diff.endsWith('\n') ? '' : '\n'));
  if (values.write) process.stderr.write(`Written: ${skillPath}\n`);
  return ExitCode.Ok;
}
