import { existsSync } from 'node:fs';
import { loadConfig } from '../../engine/config/load';
import { defaultConfig, type SkillOptConfig } from '../../engine/config/schema';
import { formatConfigWarning } from '../../engine/config/schema/problems';
import { SkillOptError, messageOf } from '../../engine/errors';
import { editSchema } from '../../engine/llm/contracts/payload';
import type { Edit } from '../../engine/skill/applyEdits';
import { unifiedDiff } from '../../engine/skill/hunks';
import { OUTSIDE_POLICY } from '../../engine/skill/package/edits';
import { isSkillFolder } from '../../engine/skill/package/folder';
import { policyFromConfig } from '../../engine/skill/package/policy';
import { readEditTarget, replayEdits, writeChanges } from '../../engine/skill/package/replay';
import { ExitCode, UsageError } from '../exit';
import { type CommandSpec, jsonFlag } from '../args';
import { parseFlags, readInputFile } from './common';

const OPS = ['append', 'insert_after', 'replace', 'delete'] as const;

export const applyEditsSpec: CommandSpec = {
  name: 'apply-edits',
  usage:
    'skillopt apply-edits --skill FILE|FOLDER --edits EDITS.json [--config FILE] [--write] [--json] [--anchor-mode strict|reference]',
  summary: "apply a list of edits to a skill, exactly as a training step's update stage does",
  flags: [
    {
      name: 'skill',
      type: 'string',
      value: 'PATH',
      help: 'the skill to edit: a SKILL.md, or a skill folder (SKILL.md with references/, scripts/, assets/) (required)',
    },
    { name: 'edits', type: 'string', value: 'FILE', help: 'the edits, as JSON (required; format below)' },
    {
      name: 'config',
      type: 'string',
      value: 'FILE',
      help: 'take optimizer.package_edits, optimizer.anchor_mode, env.max_skill_bytes and activation.enabled from this config (default: the defaults)',
    },
    {
      name: 'write',
      type: 'boolean',
      help: 'write each changed file back into --skill (default: print the result to stdout)',
    },
    {
      name: 'anchor-mode',
      type: 'string',
      value: 'MODE',
      help: "strict (default) refuses an anchor found twice; reference binds it to the first, as SkillOpt does (overrides the config's optimizer.anchor_mode)",
    },
    jsonFlag,
  ],
  legacy: false,
  notes: `Edits file: a JSON array of edits, or an object with an "edits" array (a SkillOpt patch, such as a
run's merged_patch.json or ranked_edits.json). Each edit has "op" (${OPS.join(' | ')}),
"content" (the new text; not empty for append and insert_after, none for delete) and, except for append,
"target" (exact text that anchors it); an edit missing one is refused, naming it; "file" names
the file of a skill folder it edits (default SKILL.md). Edits apply in order, each to the result of the last:
  {"edits": [
    {"op": "insert_after", "target": "## Rules", "content": "- Write dates as YYYY-MM-DD."},
    {"op": "replace", "target": "Be brief.", "content": "Answer in one sentence."},
    {"op": "delete", "target": "- Obsolete rule."},
    {"op": "append", "file": "references/guide.md", "content": "## Examples\\n..."}
  ]}
A skill folder is read as training reads env.skill_init; an edit of another file is applied under
optimizer.package_edits (editable / read_only globs, max_files, max_file_bytes; the defaults allow
SKILL.md and references/**), and one it does not allow is skipped, with the reason on its report line.
For a file, stdout gets the edited skill; for a folder, a unified diff of every changed file.
The apply report (one row per edit: applied or skipped, and why) and a diff go to stderr.`,
  examples: [
    'skillopt apply-edits --skill SKILL.md --edits edits.json > new_SKILL.md',
    'skillopt apply-edits --skill SKILL.md --edits edits.json --write',
    'skillopt apply-edits --skill my-skill --edits runs/x/steps/step_0003/merged_patch.json --config skillopt.yaml --write',
  ],
};

function readEdits(path: string): Edit[] {
  const text = readInputFile(path, 'edits file', '--edits');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new SkillOptError('config', `not valid JSON (${messageOf(err)})`, {
      file: path,
      fix: 'pass a JSON array of edits, or an object with an "edits" array (see skillopt apply-edits --help)',
    });
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
    // What training requires of an edit (a non-empty content to append, a target to anchor on): an
    // edit without it would otherwise apply as empty text (an apply report passed by mistake, a typo).
    const checked = editSchema.safeParse(e);
    const issue = checked.success ? undefined : checked.error.issues[0];
    if (issue) {
      const field = issue.path.map(String).join('.');
      throw new SkillOptError('config', `edit ${i + 1} (${op}): ${issue.message}`, {
        file: path,
        key: `edits[${i}]${field ? `.${field}` : ''}`,
        fix: 'give each edit the fields its op needs (see skillopt apply-edits --help)',
      });
    }
    return e as Edit;
  });
}

/** What the command takes from a config (or the defaults). */
function settingsOf(configPath: string | undefined): {
  cfg: SkillOptConfig;
  policyFrom: string;
  warnings: string[];
} {
  if (configPath === undefined) return { cfg: defaultConfig(), policyFrom: 'the default', warnings: [] };
  const loaded = loadConfig(configPath);
  return {
    cfg: loaded.config,
    policyFrom: configPath,
    warnings: loaded.warnings.map(formatConfigWarning),
  };
}

/** `skillopt apply-edits`: the deterministic update stage on its own, for scripts and debugging. */
export function runApplyEdits(args: readonly string[]): number {
  const values = parseFlags(args, applyEditsSpec);
  const skillPath = values.skill;
  const editsPath = values.edits;
  if (typeof skillPath !== 'string' || typeof editsPath !== 'string')
    throw new UsageError(
      'apply-edits needs --skill PATH and --edits EDITS.json',
      'see skillopt apply-edits --help',
    );
  const modeFlag = values['anchor-mode'];
  if (modeFlag !== undefined && modeFlag !== 'strict' && modeFlag !== 'reference')
    throw new UsageError(
      `--anchor-mode ${String(modeFlag)} is not a mode`,
      'use --anchor-mode strict or reference',
    );
  const { cfg, policyFrom, warnings } = settingsOf(
    typeof values.config === 'string' ? values.config : undefined,
  );
  if (!existsSync(skillPath))
    throw new SkillOptError('io', 'skill not found', {
      file: skillPath,
      fix: 'check the path given to --skill (a SKILL.md or a skill folder)',
    });
  const target = readEditTarget(skillPath, cfg.env.max_skill_bytes);
  const result = replayEdits(target, readEdits(editsPath), {
    anchorMode: modeFlag ?? cfg.optimizer.anchor_mode,
    policy: policyFromConfig(cfg.optimizer.package_edits, isSkillFolder(skillPath)),
    keepDescription: cfg.activation.enabled,
  });
  const written = values.write ? writeChanges(target, result.changes) : [];
  const notes = [
    ...warnings,
    ...target.notices,
    ...(result.descriptionKept
      ? [
          'activation.enabled is true: the edits changed the description, which only the activation track trains; it is kept',
        ]
      : []),
    ...(result.outsidePolicy.length
      ? [
          `${result.outsidePolicy.length} edit${result.outsidePolicy.length === 1 ? '' : 's'} not applied: outside optimizer.package_edits (policy from ${policyFrom})`,
        ]
      : []),
  ];
  if (values.json) {
    process.stdout.write(
      JSON.stringify({
        skill: result.skill,
        ...(target.folder
          ? { files: result.changes.map((c) => ({ path: c.path, status: c.status, text: c.after })) }
          : {}),
        report: result.report,
        ...(notes.length ? { notes } : {}),
        ...(values.write ? { written: target.folder ? written : skillPath } : {}),
      }) + '\n',
    );
    return ExitCode.Ok;
  }
  const diff = result.changes
    .map((c) =>
      unifiedDiff(c.before, c.after, {
        before: target.folder ? `a/${c.path}` : skillPath,
        after: target.folder ? `b/${c.path}` : `${skillPath} (edited)`,
      }),
    )
    .join('');
  if (!values.write) {
    if (target.folder) process.stdout.write(diff);
    else process.stdout.write(result.skill.endsWith('\n') ? result.skill : `${result.skill}\n`);
  }
  process.stderr.write(`${values.write || target.folder ? '' : '\n'}Apply report:\n`);
  for (const row of result.report) {
    const file = row.file ? ` ${row.file}` : '';
    const why = row.status === OUTSIDE_POLICY && row.error ? `: ${row.error}` : '';
    process.stderr.write(
      `  ${String(row.index).padStart(2)}. ${row.op.padEnd(12)} ${row.status}${row.occurrences ? ` (${row.occurrences} occurrences)` : ''}${file}${why}\n`,
    );
  }
  if (diff.trim() && !(target.folder && !values.write))
    process.stderr.write('\n' + diff + (diff.endsWith('\n') ? '' : '\n'));
  for (const note of notes) process.stderr.write(`Note: ${note}\n`);
  if (values.write)
    process.stderr.write(
      written.length ? `Written: ${written.join(', ')}\n` : 'Nothing changed; nothing written\n',
    );
  return ExitCode.Ok;
}
