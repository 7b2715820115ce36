/**
 * A skill folder's candidate reviewed in the editor (a live human-first `sim` run, labelled
 * simulated): the candidate changes SKILL.md and references/style-guide.md, each file gets its own
 * inline review and its own diff tab, the engine hears one decision once both are decided, the
 * documents then hold exactly the candidate's files, and the run resumed after a stop keeps them.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { applyEdits, assignEditIds } from '../../../src/engine/skill/applyEdits';
import { writeSkillArtifact } from '../../../src/engine/skill/package/artifacts';
import {
  readCandidateFiles,
  recordCandidateFiles,
  type PackageChange,
} from '../../../src/engine/skill/package/changes';
import { joinPackage } from '../../../src/engine/skill/package/text';
import { reviewFileName, RUN_FILE, RunLayout, STEP_FILE } from '../../../src/engine/store/layout';
import { ReviewCommands } from '../../../src/extension/constants';
import { candidateUri, parseCandidateUri } from '../../../src/extension/review/candidateContent';
import type { EngineEvent } from '../../../src/protocol/events';
import type { StartResult } from '../../../src/protocol/engine';
import { closeAll, inspect, lensTitleTexts, repoRoot, startHumanFirstRun, stopRun } from './reviewSupport';
import { openSkill, recordEvents, skillopt, waitFor, waitForStatus, workspacePath } from './support';

const GUIDE = 'references/style-guide.md';

type Decided = Extract<EngineEvent, { type: 'review/decided' }>;

/** A folder skill: the house-style example, its SKILL.md pointing at a style guide beside it. */
function folderSkill(): { dir: string; skillMd: string; guide: string } {
  const example = join(repoRoot(), 'examples', 'house-style');
  const dir = workspacePath('folder-review');
  mkdirSync(join(dir, 'references'), { recursive: true });
  const skillMd = join(dir, 'SKILL.md');
  writeFileSync(
    skillMd,
    `${readFileSync(join(example, 'SKILL.md'), 'utf8').trimEnd()}\n\nThe detailed style rules are in ${GUIDE}.\n`,
  );
  const guide = join(dir, ...GUIDE.split('/'));
  writeFileSync(guide, '# Style guide\n\nAnswers are pasted into forms exactly as written.\n');
  copyFileSync(join(example, 'tasks.jsonl'), join(dir, 'tasks.jsonl'));
  const config = readFileSync(join(example, 'skillopt.yaml'), 'utf8').replace(
    'skill_init: SKILL.md',
    'skill_init: .',
  );
  writeFileSync(join(dir, 'skillopt.yaml'), config);
  return { dir, skillMd, guide };
}

const docOf = (path: string): vscode.TextDocument | undefined =>
  vscode.workspace.textDocuments.find((d) => d.uri.fsPath === path);

describe('review: a skill folder candidate', function () {
  this.timeout(240_000);

  it('reviews SKILL.md and the reference file in their own editors and diffs, accepts both, and a resumed run keeps them', async () => {
    const api = await skillopt();
    const files = vscode.workspace.getConfiguration('files');
    await files.update('autoSave', 'off', vscode.ConfigurationTarget.Global);
    const { skillMd, guide } = folderSkill();
    const skillUri = vscode.Uri.file(skillMd);
    const guideUri = vscode.Uri.file(guide);
    const guideBefore = readFileSync(guide, 'utf8');
    await openSkill(skillMd);
    const rec = recordEvents(api);
    let runId: string | undefined;
    try {
      const started = await startHumanFirstRun(skillUri);
      runId = started.runId;
      const id = started.runId;
      const decided = (step: number): Decided | undefined =>
        rec.of(id).find((e): e is Decided => e.type === 'review/decided' && e.step === step);

      // The first step the run pauses on whose candidate changes both files (others are accepted whole).
      let step = 0;
      let changed: PackageChange[] = [];
      for (let tries = 0; tries < 4 && !step; tries++) {
        const waiting = await waitFor(
          () => {
            const w = api.ctx.runs.get(id)?.live?.waiting;
            return w && !decided(w.step) ? w : undefined;
          },
          'the run to pause for the person',
          90_000,
        );
        const row = await waitFor(
          async () => {
            const r = await inspect(skillUri);
            return r?.waiting && r.step === waiting.step ? r : undefined;
          },
          'the review on SKILL.md',
          20_000,
        );
        changed = readCandidateFiles(waiting.candidatePath) ?? [];
        if (changed.some((f) => f.path === 'SKILL.md') && changed.some((f) => f.path === GUIDE)) {
          step = waiting.step;
          break;
        }
        await vscode.commands.executeCommand('skillopt.review.acceptAll', { uri: row.uri, key: row.key });
        await waitFor(() => decided(waiting.step), `the decision on step ${waiting.step}`);
      }
      assert.ok(step, 'a candidate changed SKILL.md and the reference file');
      assert.ok(
        rec.of(id).some((e) => e.type === 'run/started' && e.simulated),
        'the run is labelled simulated',
      );
      const after = (path: string): string => changed.find((f) => f.path === path)!.after;

      // Both files are under review, each in its own editor, with lenses and decorations.
      await vscode.window.showTextDocument(guideUri, {
        viewColumn: vscode.ViewColumn.Beside,
        preview: false,
      });
      let skillRow = await inspect(skillUri);
      let guideRow = await waitFor(async () => {
        const r = await inspect(guideUri);
        return r?.waiting && r.drawn?.added.length ? r : undefined;
      }, 'the review drawn in the reference file');
      assert.equal(guideRow.key, skillRow?.key, 'one candidate');
      assert.deepEqual((guideRow as { files?: string[] }).files, ['SKILL.md', GUIDE]);
      assert.equal((guideRow as { file?: string }).file, GUIDE);
      assert.ok(skillRow?.drawn?.added.length, 'SKILL.md shows its added lines');
      const skillLenses = await lensTitleTexts(skillUri);
      assert.ok(
        skillLenses.some((t) => t.startsWith(`$(file) ${GUIDE}: `) && t.endsWith('to review')),
        skillLenses.join(' | '),
      );
      const guideLenses = await lensTitleTexts(guideUri);
      assert.ok(guideLenses.includes('$(check) Accept'), guideLenses.join(' | '));
      assert.ok(
        guideLenses.some((t) => t.startsWith('$(file) SKILL.md: ')),
        guideLenses.join(' | '),
      );
      assert.equal(readFileSync(guide, 'utf8'), guideBefore, 'nothing is written while under review');

      // One diff per changed file.
      await vscode.commands.executeCommand('skillopt.review.openDiff', {
        uri: skillRow!.uri,
        key: skillRow!.key,
      });
      const diffFiles = await waitFor(() => {
        const got = vscode.window.tabGroups.all
          .flatMap((g) => g.tabs)
          .flatMap((t) =>
            t.input instanceof vscode.TabInputTextDiff ? [parseCandidateUri(t.input.modified)] : [],
          )
          .filter((p) => p?.step === step)
          .map((p) => p?.file ?? 'SKILL.md');
        return got.length >= 2 ? got.sort() : undefined;
      }, 'a diff tab per changed file');
      assert.deepEqual(diffFiles, ['SKILL.md', GUIDE]);

      // Reverting the reference file mid-review sets the whole candidate aside (SKILL.md's undecided
      // lines go too); the run's "waiting" command brings both files' reviews back.
      await vscode.window.showTextDocument(guideUri, { preview: false });
      await vscode.commands.executeCommand('workbench.action.files.revert');
      await waitFor(
        async () => ((await inspect(skillUri)) || (await inspect(guideUri)) ? undefined : true),
        'the candidate set aside',
      );
      await waitFor(
        () => docOf(skillMd)?.getText() === changed.find((f) => f.path === 'SKILL.md')!.before || undefined,
        "SKILL.md without the candidate's lines",
      );
      await vscode.commands.executeCommand(ReviewCommands.openWaiting, id);
      guideRow = await waitFor(async () => {
        const r = await inspect(guideUri);
        return r?.waiting && r.step === step && r.segments.some((g) => g.present && g.kind === 'added')
          ? r
          : undefined;
      }, "the reference file's review back");
      skillRow = await inspect(skillUri);
      assert.equal(skillRow?.key, guideRow.key);
      assert.equal(docOf(guide)?.getText(), after(GUIDE), 'the pending lines are back in the reference file');

      // The reference file's edits one by one: the engine hears nothing until SKILL.md is decided too.
      for (const o of guideRow.owners.filter((x) => x.fate === 'pending'))
        await vscode.commands.executeCommand('skillopt.review.acceptEdit', {
          uri: guideRow.uri,
          key: guideRow.key,
          editId: o.id,
        });
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(decided(step), undefined, 'no decision while SKILL.md is still under review');
      await vscode.commands.executeCommand('skillopt.review.acceptAll', {
        uri: skillRow!.uri,
        key: skillRow!.key,
      });
      // Accepting put exactly the candidate's files into the documents (the run has not moved on
      // to its next step yet); nothing reached the disk (saving is the person's; Undo takes it back).
      assert.equal(docOf(guide)?.getText(), after(GUIDE));
      assert.equal(docOf(skillMd)?.getText(), after('SKILL.md'));
      assert.equal(readFileSync(guide, 'utf8'), guideBefore);
      const decision = await waitFor(() => decided(step), 'one decision for the candidate');
      assert.equal(decision.decision, 'human_kept_all');
      // The engine saved one answer naming every edit of both files.
      const runDir = api.ctx.runs.get(id)!.dir;
      const saved = JSON.parse(
        readFileSync(new RunLayout(runDir).stepFile(step, reviewFileName('before_gate')), 'utf8'),
      ) as { edits: Array<{ editId: string; accept: boolean }> };
      const editIds = [...guideRow.owners, ...skillRow!.owners]
        .filter((o) => o.fate !== 'skipped')
        .map((o) => o.id);
      assert.deepEqual(saved.edits.map((d) => d.editId).sort(), editIds.sort());
      assert.ok(saved.edits.every((d) => d.accept));

      // The gate keeps the candidate, the run is stopped and resumed:
      // it goes on from the skill with both files as accepted.
      const verdict = await waitFor(
        () =>
          rec
            .of(id)
            .find(
              (e): e is Extract<EngineEvent, { type: 'gate/verdict' }> =>
                e.type === 'gate/verdict' && e.step === step && e.origin === 'step',
            ),
        'the gate verdict',
        90_000,
      );
      assert.match(verdict.action, /^accept/, `the gate kept step ${step}`);
      const snapshot = join(runDir, 'skills', `skill_v${String(step).padStart(4, '0')}`);
      assert.equal(readFileSync(join(snapshot, ...GUIDE.split('/')), 'utf8'), after(GUIDE));
      await vscode.commands.executeCommand('skillopt.stopRun', id);
      await waitForStatus(api, id, 'stopped');
      const resumed = await vscode.commands.executeCommand<StartResult | undefined>('skillopt.resumeRun', id);
      assert.equal(resumed?.outDir, runDir);
      const restart = await waitFor(
        () =>
          rec
            .of(id)
            .filter((e): e is Extract<EngineEvent, { type: 'run/started' }> => e.type === 'run/started')
            .find((e) => e.resumedFromStep !== undefined),
        'the resumed run',
      );
      assert.ok(restart.resumedFromStep! > step, 'the decided step is not asked again');
      const next = await waitFor(
        () => {
          const w = api.ctx.runs.get(id)?.live?.waiting;
          return w && w.step > step ? w : undefined;
        },
        'the resumed run to pause on a later step',
        90_000,
      );
      // The resumed run's next candidate starts from both files as the decided step left them.
      const nextFiles = (readCandidateFiles(next.candidatePath) ?? []).filter((f) =>
        ['SKILL.md', GUIDE].includes(f.path),
      );
      assert.ok(nextFiles.length, 'the next candidate changes SKILL.md or the reference file again');
      for (const f of nextFiles) assert.equal(f.before, after(f.path), `${f.path} before step ${next.step}`);
      assert.equal(readFileSync(join(snapshot, ...GUIDE.split('/')), 'utf8'), after(GUIDE));

      // A diff of the decided step's reference file cannot act any more: its Accept writes nothing,
      // leaves the review the run now waits on, and closes that step's diff tabs.
      // Its lines drawn: the texts compared below are taken once the next review is in the document.
      const pending = await waitFor(async () => {
        const r = await inspect(guideUri);
        return r?.waiting && r.step === next.step && r.segments.some((g) => g.present && g.kind === 'added')
          ? r
          : undefined;
      }, 'the next review drawn in the reference file');
      await vscode.commands.executeCommand('skillopt.review.openDiff', { runDir, runId: id, step });
      const stepTabs = (): number =>
        vscode.window.tabGroups.all
          .flatMap((g) => g.tabs)
          .filter(
            (t) =>
              t.input instanceof vscode.TabInputTextDiff &&
              parseCandidateUri(t.input.modified)?.step === step,
          ).length;
      await waitFor(() => stepTabs() >= 2 || undefined, "the decided step's two diff tabs");
      const texts = [docOf(guide)?.getText(), docOf(skillMd)?.getText()];
      await vscode.commands.executeCommand(
        'skillopt.review.acceptCandidate',
        candidateUri({ runDir, runId: id, step, origin: 'step', side: 'candidate', file: GUIDE }),
      );
      await waitFor(() => stepTabs() === 0 || undefined, "the decided step's diff tabs closed");
      assert.deepEqual([docOf(guide)?.getText(), docOf(skillMd)?.getText()], texts, 'nothing written');
      assert.equal((await inspect(guideUri))?.key, pending.key);
      assert.equal((await inspect(guideUri))?.phase, 'review');
      assert.equal(decided(next.step), undefined);
    } finally {
      rec.dispose();
      if (runId) {
        await stopRun(api.ctx.runs, runId);
        // The stopped run's reviews take their lines out of both files before they are reverted.
        await waitFor(
          async () => ((await inspect(guideUri)) || (await inspect(skillUri)) ? undefined : true),
          'the reviews to end with the run',
        );
      }
      await closeAll();
      await files.update('autoSave', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('shows a file the candidate adds as a new document diffed against empty, and Reject All leaves every file as it was', async () => {
    await skillopt();
    // Auto-save would write the review's lines (as for SKILL.md); what is checked here is the review.
    const files = vscode.workspace.getConfiguration('files');
    await files.update('autoSave', 'off', vscode.ConfigurationTarget.Global);
    const dir = workspacePath('folder-review-new');
    mkdirSync(join(dir, 'references'), { recursive: true });
    const skill = '# Forms\n\nAnswer briefly; the rules are in references/guide.md.\n';
    const guideText = '# Guide\n\nAnswers are pasted into forms.\n';
    const skillMd = join(dir, 'SKILL.md');
    const guide = join(dir, 'references', 'guide.md');
    const added = join(dir, 'references', 'checklist.md');
    writeFileSync(skillMd, skill);
    writeFileSync(guide, guideText);
    // A finished run's step whose candidate edits SKILL.md and the guide and adds a checklist.
    const previous = joinPackage({
      skill,
      files: [{ path: 'references/guide.md', text: guideText }],
      readOnly: [],
    });
    const edits = assignEditIds([
      { op: 'append', content: '- Quote amounts with their currency symbol.' },
      { op: 'append', file: 'references/guide.md', content: 'Dates are written as YYYY-MM-DD.' },
      { op: 'append', file: 'references/checklist.md', content: '# Checklist\n\n- Units as asked.' },
    ]);
    const applied = applyEdits(previous, edits);
    const runDir = join(dir, '.skillopt', 'runs', 'pkg');
    const layout = new RunLayout(runDir);
    const candidatePath = layout.stepFile(1, STEP_FILE.candidate);
    writeSkillArtifact(layout.skillVersion(0), previous);
    writeSkillArtifact(candidatePath, applied.text);
    const changed = recordCandidateFiles(candidatePath, previous, applied.text) ?? [];
    assert.deepEqual(
      changed.map((f) => [f.path, f.status]),
      [
        ['SKILL.md', 'changed'],
        ['references/checklist.md', 'added'],
        ['references/guide.md', 'changed'],
      ],
    );
    writeFileSync(layout.stepFile(1, STEP_FILE.ranked), JSON.stringify({ edits }));
    writeFileSync(layout.stepFile(1, STEP_FILE.applyReport), JSON.stringify(applied.report));
    writeFileSync(layout.file(RUN_FILE.history), JSON.stringify([{ step: 1, epoch: 1, action: 'reject' }]));
    writeFileSync(layout.file(RUN_FILE.config), JSON.stringify({ skill_init: dir, review_mode: 'auto' }));
    const texts = readCandidateFiles(candidatePath)!;
    const after = (path: string): string => texts.find((f) => f.path === path)!.after;
    try {
      await vscode.commands.executeCommand('skillopt.review.openCandidate', {
        runId: runDir,
        runDir,
        step: 1,
      });
      const skillUri = vscode.Uri.file(skillMd);
      const newUri = vscode.Uri.file(added).with({ scheme: 'untitled' });
      const row = await waitFor(async () => {
        const r = await inspect(skillUri);
        return r?.phase === 'review' ? r : undefined;
      }, 'the review of SKILL.md');
      assert.deepEqual((row as { files?: string[] }).files, [
        'SKILL.md',
        'references/checklist.md',
        'references/guide.md',
      ]);
      // The new file is an unsaved document at its path showing the candidate's lines; nothing on disk.
      const newRow = await waitFor(() => inspect(newUri), 'the review of the new file');
      assert.equal(newRow.key, row.key);
      const newDoc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === newUri.toString())!;
      assert.equal(newDoc.getText(), after('references/checklist.md'));
      assert.equal(existsSync(added), false);
      assert.ok(
        (await lensTitleTexts(skillUri)).includes('$(file) references/checklist.md (new file): 1 to review'),
      );
      // Its diff is against an empty file.
      await vscode.commands.executeCommand('skillopt.review.openDiff', { uri: row.uri, key: row.key });
      const left = await waitFor(
        () =>
          vscode.window.tabGroups.all
            .flatMap((g) => g.tabs)
            .flatMap((t) => (t.input instanceof vscode.TabInputTextDiff ? [t.input] : []))
            .find((i) => parseCandidateUri(i.modified)?.file === 'references/checklist.md')?.original,
        "the new file's diff",
      );
      assert.equal((await vscode.workspace.openTextDocument(left)).getText(), '');

      // Reject All: every file is back to what it was, the new one empty; nothing written; diffs closed.
      await vscode.commands.executeCommand('skillopt.review.rejectAll', {
        uri: row.uri,
        key: row.key,
        reason: '',
      });
      assert.equal(docOf(skillMd)?.getText(), skill);
      assert.equal(docOf(guide)?.getText(), guideText);
      assert.equal(newDoc.getText(), '');
      // The new file's empty unsaved document goes with the review (no Save prompt for it later).
      await waitFor(
        () =>
          !vscode.workspace.textDocuments.some((d) => d.uri.toString() === newUri.toString()) || undefined,
        "the new file's document closed",
      );
      assert.equal(readFileSync(guide, 'utf8'), guideText);
      assert.equal(readFileSync(skillMd, 'utf8'), skill);
      assert.equal(existsSync(added), false);
      await waitFor(
        () =>
          vscode.window.tabGroups.all
            .flatMap((g) => g.tabs)
            .some((t) => t.input instanceof vscode.TabInputTextDiff)
            ? undefined
            : true,
        "the decided step's diff tabs closed",
      );
    } finally {
      await closeAll();
      await files.update('autoSave', undefined, vscode.ConfigurationTarget.Global);
    }
  });
});
