/**
 * A skill folder from the editor: Optimize This Skill on the SKILL.md of a folder whose config names
 * the folder trains the whole folder (a reference file included), and Apply Best writes every file
 * of the run's best_skill/ that changed, as one undoable edit, after one diff tab per file; an unsaved
 * edit of one of those files is never overwritten.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { StartResult } from '../../../src/protocol/engine';
import {
  closeEditors,
  diffTabs,
  openSkill,
  rows,
  skillopt,
  waitFor,
  waitForStatus,
  workspacePath,
} from './support';

const GUIDE = join('references', 'style-guide.md');

describe('SkillOpt extension: a skill folder', function () {
  this.timeout(180_000);
  afterEach(closeEditors);

  it('trains the whole folder from Optimize This Skill, and Apply Best writes every changed file', async () => {
    const api = await skillopt();
    const example = workspacePath('house-style');
    const dir = workspacePath('folder-skill');
    mkdirSync(join(dir, 'references'), { recursive: true });
    const skillMd = join(dir, 'SKILL.md');
    writeFileSync(
      skillMd,
      `${readFileSync(join(example, 'SKILL.md'), 'utf8').trimEnd()}\n\nThe detailed style rules are in references/style-guide.md.\n`,
    );
    writeFileSync(join(dir, GUIDE), '# Style guide\n\nAnswers are pasted into forms exactly as written.\n');
    copyFileSync(join(example, 'tasks.jsonl'), join(dir, 'tasks.jsonl'));
    const config = readFileSync(join(example, 'skillopt.yaml'), 'utf8').replace(
      'skill_init: SKILL.md',
      'skill_init: .',
    );
    assert.match(config, /skill_init: \./);
    writeFileSync(join(dir, 'skillopt.yaml'), config);

    await openSkill(skillMd);
    const started = await vscode.commands.executeCommand<StartResult | undefined>(
      'skillopt.optimizeSkill',
      vscode.Uri.file(skillMd),
      { confirm: false },
    );
    assert.ok(started, 'a run started');
    await waitForStatus(api, started.runId, 'finished');
    // The runs tree shows the folder run like any other: its steps and their candidate diffs.
    const run = await waitFor(
      () => rows(api).find((x) => x.el.spec.runId === started.runId && x.description.startsWith('finished')),
      'the run row to say finished',
    );
    const steps = rows(api, run.el)
      .filter((c) => c.label.startsWith('Epoch '))
      .flatMap((e) => rows(api, e.el))
      .filter((r) => r.label.startsWith('Step '));
    assert.ok(steps.length > 0);
    assert.ok(rows(api, steps[0]!.el).some((f) => f.label === 'Candidate diff'));
    const best = join(started.outDir, 'best_skill');
    assert.ok(existsSync(join(best, GUIDE)), 'the best skill is a folder with the reference file');
    assert.equal(existsSync(join(best, 'tasks.jsonl')), false, 'the tasks are not part of the skill');
    const bestGuide = readFileSync(join(best, GUIDE), 'utf8');
    assert.notEqual(bestGuide, readFileSync(join(dir, GUIDE), 'utf8'), 'the run edited the reference file');

    // A file the best skill adds (a script) and one only the person's folder holds (kept as it is).
    const check = 'print("ok")\n';
    mkdirSync(join(best, 'scripts'), { recursive: true });
    writeFileSync(join(best, 'scripts', 'check.py'), check);
    writeFileSync(join(dir, 'references', 'notes.md'), 'mine\n');

    // An unsaved edit of a file Apply Best would write: refused, nothing written, the buffer kept.
    const guideEditor = await openSkill(join(dir, GUIDE));
    await guideEditor.edit((e) => e.insert(new vscode.Position(0, 0), 'unsaved '));
    assert.equal(
      await vscode.commands.executeCommand<boolean>('skillopt.applyBestSkill', started.runId, {
        confirm: false,
      }),
      false,
    );
    assert.ok(guideEditor.document.getText().startsWith('unsaved '), 'the unsaved edit is kept');
    assert.equal(existsSync(join(dir, 'scripts', 'check.py')), false, 'nothing was written');
    assert.equal(diffTabs().length, 0, 'no preview for a refused apply');
    await vscode.window.showTextDocument(guideEditor.document);
    await vscode.commands.executeCommand('workbench.action.files.revert');
    assert.equal(guideEditor.document.isDirty, false);

    const ok = await vscode.commands.executeCommand<boolean>('skillopt.applyBestSkill', started.runId, {
      confirm: false,
    });
    assert.equal(ok, true);
    // One diff tab per changed file: the folder's file (an empty side for a new one) ↔ the best's.
    const tabs = diffTabs();
    for (const [path, isNew] of [
      ['SKILL.md', false],
      [GUIDE, false],
      [join('scripts', 'check.py'), true],
    ] as const) {
      const tab = tabs.find((t) => t.modified.fsPath === join(best, path));
      assert.ok(tab, `a diff tab for ${path}`);
      assert.equal(tab.original.fsPath, join(dir, path));
      assert.equal(tab.original.scheme, isNew ? 'skillopt-new-file' : 'file');
    }
    assert.equal(tabs.length, 3, 'no diff for the file only the folder holds');
    assert.equal(readFileSync(join(dir, 'scripts', 'check.py'), 'utf8'), check, 'the new file is written');
    assert.equal(readFileSync(join(dir, 'references', 'notes.md'), 'utf8'), 'mine\n');
    // Each changed file is edited as a document (unsaved, so Undo can take it back); saved, it is the best's.
    for (const [file, want] of [
      [join(dir, GUIDE), bestGuide],
      [skillMd, readFileSync(join(best, 'SKILL.md'), 'utf8')],
    ] as const) {
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === file);
      assert.ok(doc?.isDirty, `${file} was edited`);
      assert.equal(doc.getText(), want);
      assert.ok(await doc.save());
      assert.equal(readFileSync(file, 'utf8'), want);
    }
  });
});
