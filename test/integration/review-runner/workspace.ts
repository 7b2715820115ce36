/**
 * The review screenshots' workspace: the house-style example trained once by the CLI (meta reflection
 * and the activation track on), a copy of the run whose step-1 edit is hostile text, and a skill with a protected block.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../harness/host';

export const themes = {
  light: 'Default Light Modern',
  dark: 'Default Dark Modern',
  hc: 'Default High Contrast',
} as const;
export type Theme = keyof typeof themes;

/** Text an optimizer could write; the webview must show it, not run it. */
const hostile =
  '- Quote names <b>exactly</b>.<script>window.__skilloptPwned = 1</script><img src=x onerror="window.__skilloptPwned = 2">';

/** The built CLI (`dist/cli.js`) with `args`; its output in the error when it fails. */
export function cli(args: string[]): void {
  const r = spawnSync(process.execPath, [join(repoRoot, 'dist', 'cli.js'), ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`skillopt ${args[0]} failed:\n${r.stdout}${r.stderr}`);
}

function train(ws: string): string {
  const dir = join(ws, 'house-style');
  const runDir = join(dir, '.skillopt', 'runs', 'house-style_demo');
  // Meta reflection on: its candidate deletes and moves rules, so the review shows struck-through lines.
  cli([
    'train',
    join(dir, 'skillopt.yaml'),
    '--out',
    runDir,
    '--cfg-options',
    'optimizer.use_meta_reflect=true',
    'activation.enabled=true',
    `activation.trigger_file=${join(dir, 'triggers.json')}`,
  ]);
  return runDir;
}

/** The initial skill scored on the selection split, where the extension's Evaluate writes (the Runs view's Evaluations). */
function evaluate(ws: string): void {
  const dir = join(ws, 'house-style');
  const out = join(dir, '.skillopt', 'evals', 'SKILL_val_demo');
  cli(['eval', join(dir, 'skillopt.yaml'), '--skill', join(dir, 'SKILL.md'), '--split', 'val', '--out', out]);
}

/** The workspace: the example trained once, a copy whose step-1 edit is hostile, a skill with a protected block. */
export function workspace(sandbox: string, theme: Theme): { ws: string; runDir: string } {
  const ws = join(sandbox, 'workspace');
  const example = join(repoRoot, 'examples', 'house-style');
  for (const f of ['SKILL.md', 'tasks.jsonl', 'skillopt.yaml', 'triggers.json'])
    cpSync(join(example, f), join(ws, 'house-style', f));
  const runDir = train(ws);
  evaluate(ws);
  const hostileRun = join(ws, 'house-style', '.skillopt', 'runs', 'house-style_hostile');
  cpSync(runDir, hostileRun, { recursive: true });
  const ranked = join(hostileRun, 'steps', 'step_0001', 'ranked_edits.json');
  const data = JSON.parse(readFileSync(ranked, 'utf8')) as { edits: Array<{ content?: string }> };
  data.edits[0]!.content = hostile;
  writeFileSync(ranked, JSON.stringify(data, null, 2));
  // A skill whose protected block has content: the slow update's candidate of the last epoch.
  const locked = join(ws, 'locked');
  mkdirSync(locked, { recursive: true });
  const slow = join(runDir, 'slow_update');
  const epochs = spawnSync('ls', [slow], { encoding: 'utf8' }).stdout.trim().split('\n');
  const withBlock = epochs
    .map((e) => join(slow, e, 'candidate_skill.md'))
    .map((p) => {
      try {
        return readFileSync(p, 'utf8');
      } catch {
        return '';
      }
    })
    .find((t) => /SLOW_UPDATE_START -->\n[^<]/.test(t));
  if (!withBlock) throw new Error('the sim run wrote no slow update with content');
  // Named after its folder, so the skill lint has nothing to say in the screenshot.
  writeFileSync(join(locked, 'SKILL.md'), withBlock.replace(/^name: .*$/m, 'name: locked'));
  cpSync(join(example, 'skillopt.yaml'), join(locked, 'skillopt.yaml'));
  mkdirSync(join(ws, '.vscode'), { recursive: true });
  writeFileSync(
    join(ws, '.vscode', 'settings.json'),
    JSON.stringify(
      {
        'workbench.colorTheme': themes[theme],
        'editor.minimap.enabled': false,
      },
      null,
      1,
    ),
  );
  return { ws, runDir };
}

/** The skill the epoch's meta reflection started from (its snapshot in the run folder). */
export function skillBeforeMetaReflection(runDir: string): string {
  const meta = JSON.parse(
    readFileSync(join(runDir, 'meta_reflect', 'epoch_01', 'meta_reflect_result.json'), 'utf8'),
  ) as { skill_hash: string };
  const snapshots = join(runDir, 'skills');
  const before = readdirSync(snapshots)
    .map((f) => readFileSync(join(snapshots, f), 'utf8'))
    .find((t) => createHash('sha256').update(t, 'utf8').digest('hex').slice(0, 16) === meta.skill_hash);
  if (!before) throw new Error('no skill snapshot matches the meta reflection');
  return before;
}

/**
 * The house-style example as a skill folder in `dir` (SKILL.md pointing at `guide`, the guide with
 * `guideText`, the tasks, a config whose `skill_init` is the folder), trained by the CLI into
 * `.skillopt/runs/<run>`. Returns the run folder.
 */
export function trainFolderSkill(dir: string, guide: string, guideText: string, run: string): string {
  const example = join(repoRoot, 'examples', 'house-style');
  mkdirSync(join(dir, ...guide.split('/').slice(0, -1)), { recursive: true });
  writeFileSync(
    join(dir, 'SKILL.md'),
    `${readFileSync(join(example, 'SKILL.md'), 'utf8').trimEnd()}\n\nThe detailed style rules are in ${guide}.\n`,
  );
  writeFileSync(join(dir, ...guide.split('/')), guideText);
  cpSync(join(example, 'tasks.jsonl'), join(dir, 'tasks.jsonl'));
  writeFileSync(
    join(dir, 'skillopt.yaml'),
    readFileSync(join(example, 'skillopt.yaml'), 'utf8').replace('skill_init: SKILL.md', 'skill_init: .'),
  );
  const runDir = join(dir, '.skillopt', 'runs', run);
  cli(['train', join(dir, 'skillopt.yaml'), '--out', runDir]);
  return runDir;
}
