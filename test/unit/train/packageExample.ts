import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EditReportRow } from '../../../src/engine/skill/applyEdits';
import { RunLayout, STEP_FILE } from '../../../src/engine/store/layout';
import type { StepRecord } from '../../../src/protocol/records';
import { exampleConfig, readJson } from './helpers';

export const GUIDE = 'references/style-guide.md';
export const LOGO = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

/** The bundled example with its skill as a folder: SKILL.md pointing at a reference file, and a binary asset. */
export function packageExample(root: string): string {
  const example = join(exampleConfig, '..');
  const skill = join(root, 'house-style-answers');
  mkdirSync(join(skill, 'references'), { recursive: true });
  mkdirSync(join(skill, 'assets'), { recursive: true });
  writeFileSync(
    join(skill, 'SKILL.md'),
    `${readFileSync(join(example, 'SKILL.md'), 'utf8').trimEnd()}\n\nThe detailed style rules are in ${GUIDE}.\n`,
  );
  writeFileSync(join(skill, GUIDE), '# Style guide\n\nAnswers are pasted into forms exactly as written.\n');
  writeFileSync(join(skill, 'assets', 'logo.png'), LOGO);
  cpSync(join(example, 'tasks.jsonl'), join(root, 'tasks.jsonl'));
  const config = readFileSync(exampleConfig, 'utf8').replace(
    'skill_init: SKILL.md',
    'skill_init: house-style-answers',
  );
  assert.match(config, /skill_init: house-style-answers/);
  writeFileSync(join(root, 'skillopt.yaml'), config);
  return join(root, 'skillopt.yaml');
}

/** The steps whose candidate changed both SKILL.md and the reference file (from their apply reports). */
export function bothFileSteps(outDir: string): number[] {
  const steps: number[] = [];
  for (const r of readJson<StepRecord[]>(outDir, 'history.json')) {
    const path = new RunLayout(outDir).stepFile(r.step, STEP_FILE.applyReport);
    if (!existsSync(path)) continue;
    const rows = JSON.parse(readFileSync(path, 'utf8')) as EditReportRow[];
    const applied = rows.filter((row) => row.status.startsWith('applied'));
    if (applied.some((row) => row.file === GUIDE) && applied.some((row) => row.file === undefined))
      steps.push(r.step);
  }
  return steps;
}

/** Every file of a folder, by relative path, with its bytes. */
export function filesOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
    const p = join(dir, rel);
    if (statSync(p).isFile()) out[rel.replace(/\\/g, '/')] = readFileSync(p).toString('base64');
  }
  return out;
}
