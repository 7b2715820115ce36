/**
 * Review commands. CodeLens and editor-title buttons address a review by document and session key
 * and an edit by its stable id, never by position. Commands without arguments act on the review
 * in the active editor.
 */
import * as vscode from 'vscode';
import type { EngineEvent } from '../../protocol/events';
import { Commands, ReviewCommands } from '../constants';
import type { Ctx } from '../ctx';
import { openCandidateDiff, openCandidateDiffs, parseCandidateUri } from './candidateContent';
import { refuseStaleDiff } from './diffTabs';
import type { ReviewController, TrackedSession } from './controller';
import { membersOf } from './registry';
import { runIdOf } from '../commands/shared';
import type { ReviewView } from './view';
import { endedMessage, whyNoEffect, type ReviewAction } from './outcomes';
import { isObject, editArgs, hintsOf, originOf, askReason, pickRun, pickStep } from './reviewPrompts';

export function registerReviewCommands(ctx: Ctx, controller: ReviewController, view: ReviewView): void {
  /** The run of this review ended before it was decided: say so, offer Resume. */
  const endedOn = (uri: string, key?: string): boolean => {
    const e = controller.ended.get(uri);
    if (!e || (key !== undefined && e.key !== key)) return false;
    void vscode.window.showInformationMessage(endedMessage(e), 'Resume Run').then((pick) => {
      if (pick) void vscode.commands.executeCommand(Commands.resumeRun, e.runId);
    });
    return true;
  };

  const sessionOf = (arg: unknown): TrackedSession | undefined => {
    const a = editArgs(arg);
    if (a) {
      const t = controller.sessionFor(vscode.Uri.parse(a.uri));
      if (t?.session.key === a.key) return t;
      if (endedOn(a.uri, a.key)) return undefined;
      void vscode.window.showInformationMessage(
        t && t.session.phase !== 'done'
          ? 'SkillOpt: that review has been replaced by a newer candidate; use the buttons at the top of the file.'
          : 'SkillOpt: that review is over (decided, dismissed or replaced); nothing changed.',
      );
      return undefined;
    }
    const editor = vscode.window.activeTextEditor;
    if (arg instanceof vscode.Uri) {
      const p = parseCandidateUri(arg);
      if (p)
        return (
          controller.findByRun(p.runId ?? p.runDir, p.step, p.origin) ??
          controller.findByRun(p.runDir, p.step, p.origin)
        );
      return controller.sessionFor(arg);
    }
    return editor ? controller.sessionFor(editor.document.uri) : undefined;
  };

  const noReview = (): void => {
    const uri = vscode.window.activeTextEditor?.document.uri.toString();
    if (uri && endedOn(uri)) return;
    void vscode.window.showInformationMessage('SkillOpt: there is no candidate under review in this editor.');
  };

  /** Says why an action would change nothing; true when it was refused so. */
  const refused = (t: TrackedSession, action: ReviewAction): boolean => {
    const why = whyNoEffect(t.session, action);
    if (!why) return false;
    if (why.includes('Open in Diff View'))
      void vscode.window.showInformationMessage(why, 'Open in Diff View').then((pick) => {
        if (pick)
          void vscode.commands.executeCommand('skillopt.review.openDiff', {
            uri: t.uri.toString(),
            key: t.session.key,
          });
      });
    else void vscode.window.showInformationMessage(why);
    return true;
  };

  const register = (id: string, fn: (...args: unknown[]) => unknown): void => {
    ctx.pushExtCleanup(vscode.commands.registerCommand(id, fn));
  };

  register('skillopt.review.acceptEdit', async (arg: unknown) => {
    const t = sessionOf(arg);
    const id = editArgs(arg)?.editId;
    if (!t || !id) return noReview();
    if (refused(t, { kind: 'edit', editId: id, accept: true })) return t.session.owners.get(id)?.fate;
    await controller.transition(t, (s) => s.decide([id], true));
    return t.session.owners.get(id)?.fate;
  });

  register('skillopt.review.rejectEdit', async (arg: unknown) => {
    const t = sessionOf(arg);
    const a = editArgs(arg);
    if (!t || !a?.editId) return noReview();
    if (refused(t, { kind: 'edit', editId: a.editId, accept: false }))
      return t.session.owners.get(a.editId)?.fate;
    const reason = await askReason('Reject this edit', a.reason);
    if (reason === undefined) return undefined;
    const id = a.editId;
    await controller.transition(t, (s) => s.decide([id], false, reason || undefined));
    return t.session.owners.get(id)?.fate;
  });

  /** The review a whole-candidate command means: its argument's, or the step a diff view shows. */
  const wholeCandidateTarget = async (arg: unknown) => {
    const fromDiff = arg instanceof vscode.Uri ? parseCandidateUri(arg) : undefined;
    let t = sessionOf(arg);
    if (!t && fromDiff) {
      if (await refuseStaleDiff(ctx, fromDiff)) {
        return { t: undefined, fromDiff, stale: true };
      }
      t = await controller.openFromFolder(
        fromDiff.runId ?? fromDiff.runDir,
        fromDiff.runDir,
        fromDiff.step,
        fromDiff.origin,
      );
    }
    // A skill folder's candidate: the whole-candidate action is answered by a file still under review.
    if (t?.session.phase === 'done') t = membersOf(t).find((m) => m.session.phase !== 'done') ?? t;
    return { t, fromDiff, stale: false };
  };

  const unplacedOf = (t: TrackedSession): number =>
    membersOf(t).reduce((n, m) => n + m.session.withFate('conflict').length, 0);

  /** Accept All / Accept Candidate / Accept Anyway: the whole candidate, whatever the phase. */
  const acceptWhole = async (arg: unknown): Promise<string | undefined> => {
    const { t, fromDiff, stale } = await wholeCandidateTarget(arg);
    if (!t) {
      if (!stale) noReview();
      return undefined;
    }
    if (refused(t, { kind: 'whole', accept: true, fromDiff: fromDiff !== undefined })) return t.session.phase;
    const unplaced = unplacedOf(t);
    await controller.transitionAll(t, (s) => s.acceptCandidate(fromDiff !== undefined));
    if (fromDiff) {
      await vscode.window.showTextDocument(t.uri, { preview: false });
      // The person accepted the whole candidate they saw; lines the editor could not place go in too.
      if (unplaced > 0 && (await controller.writeCandidate(t))) {
        void vscode.window.showInformationMessage(
          `SkillOpt: ${membersOf(t)
            .map((m) => m.fileName)
            .join(
              ', ',
            )} now hold${membersOf(t).length === 1 ? 's' : ''} the whole candidate, including ${unplaced} change${unplaced === 1 ? '' : 's'} your edits had moved; Undo brings your version back.`,
        );
      }
    }
    return t.session.phase;
  };

  const rejectWhole = async (arg: unknown): Promise<string | undefined> => {
    const { t, fromDiff, stale } = await wholeCandidateTarget(arg);
    if (!t) {
      if (!stale) noReview();
      return undefined;
    }
    if (refused(t, { kind: 'whole', accept: false, fromDiff: fromDiff !== undefined }))
      return t.session.phase;
    const title = t.session.phase === 'verdict' ? 'Revert this candidate' : 'Reject this candidate';
    const reason = await askReason(title, editArgs(arg)?.reason);
    if (reason === undefined) return undefined;
    await controller.transitionAll(t, (s) => s.rejectCandidate(reason || undefined, fromDiff !== undefined));
    return t.session.phase;
  };

  register('skillopt.review.acceptAll', acceptWhole);
  register('skillopt.review.rejectAll', rejectWhole);
  register('skillopt.review.acceptCandidate', acceptWhole);
  register('skillopt.review.rejectCandidate', rejectWhole);

  register('skillopt.review.dismiss', (arg: unknown) => {
    const a = editArgs(arg);
    if (a && controller.ended.get(a.uri)?.key === a.key)
      return controller.dismissEnded(vscode.Uri.parse(a.uri));
    const t = sessionOf(arg);
    if (t) controller.dismiss(t);
  });

  register('skillopt.review.openDiff', async (arg: unknown) => {
    const direct = isObject(arg) && typeof arg.step === 'number' ? arg : undefined;
    if (direct) {
      const runId = runIdOf(direct);
      const runDir =
        typeof direct.runDir === 'string'
          ? direct.runDir
          : runId
            ? (ctx.runs.get(runId)?.dir ?? runId)
            : undefined;
      if (!runDir) return;
      await openCandidateDiffs({
        runDir,
        step: direct.step as number,
        origin: originOf(direct.origin),
        ...(runId ? { runId } : {}),
      });
      return;
    }
    const t = sessionOf(arg);
    if (!t?.session.init.runDir) return noReview();
    const { init } = t.session;
    const target = {
      runDir: init.runDir ?? init.runId,
      step: init.step,
      origin: init.origin,
      runId: init.runId,
    };
    // One diff per file of a skill folder's candidate, SKILL.md's first.
    const members = membersOf(t);
    for (const m of members)
      await openCandidateDiff(target, m.fileName, m.session.init.file, members.length === 1);
  });

  register('skillopt.review.openCandidate', async (arg: unknown) => {
    // A step row of the Runs view passes its tree element; its spec names the run and the step.
    const a = isObject(arg) ? (isObject(arg.spec) ? arg.spec : arg) : {};
    const runId = runIdOf(a) ?? (await pickRun(ctx));
    if (!runId) return undefined;
    const runDir = typeof a.runDir === 'string' ? a.runDir : (ctx.runs.get(runId)?.dir ?? runId);
    let step = typeof a.step === 'number' ? a.step : undefined;
    let origin = originOf(a.origin);
    const live = ctx.runs.get(runId)?.live;
    const waiting = live?.status === 'running' ? live.waiting : undefined;
    // The step the run is paused on opens into its review, not as a read-only past candidate.
    if (waiting && (step === undefined || (step === waiting.step && origin === 'step'))) {
      const picked = step === undefined ? await pickStep(runDir, waiting.step) : { step, origin };
      if (!picked) return undefined;
      if (picked.step === waiting.step && picked.origin === 'step')
        return vscode.commands.executeCommand(ReviewCommands.openWaiting, runId);
      step = picked.step;
      origin = picked.origin;
    }
    if (step === undefined) {
      const picked = await pickStep(runDir);
      if (!picked) return undefined;
      step = picked.step;
      origin = picked.origin;
    }
    const t = await controller.openFromFolder(runId, runDir, step, origin, hintsOf(a));
    return t ? t.session.key : undefined;
  });

  register(ReviewCommands.openWaiting, async (arg: unknown) => {
    const waitingRuns = ctx.runs.list().filter((r) => r.live?.status === 'running' && r.live.waiting);
    const id = runIdOf(arg);
    let run = id ? ctx.runs.get(id) : waitingRuns.length === 1 ? waitingRuns[0] : undefined;
    if (!id && waitingRuns.length > 1) {
      const pick = await vscode.window.showQuickPick(
        waitingRuns.map((r) => ({ label: r.name, description: `step ${r.live?.waiting?.step}`, run: r })),
        { title: 'Review the step a run waits for', placeHolder: 'Pick a run' },
      );
      run = pick?.run;
      if (!pick) return undefined;
    }
    const request = run?.live?.status === 'running' ? run.live.waiting : undefined;
    if (!run || !request) {
      void vscode.window.showInformationMessage('SkillOpt: no run is waiting for your review.');
      return undefined;
    }
    const t = await controller.reopenWaiting(run.dir, request);
    if (!t) {
      void vscode.window.showWarningMessage(
        `SkillOpt: the candidate of step ${request.step} could not be opened; see the SkillOpt log.`,
      );
      return undefined;
    }
    return { uri: t.uri.toString(), key: t.session.key };
  });

  // Internal: feeds one engine event through the same path as the live run events (used to
  // replay runs and by the integration tests); hints say which skill, mode and liveness to assume.
  register('skillopt.review.handleEvent', async (arg: unknown) => {
    if (
      !isObject(arg) ||
      typeof arg.runId !== 'string' ||
      !isObject(arg.event) ||
      typeof arg.event.type !== 'string'
    ) {
      return false;
    }
    controller.setHints(arg.runId, hintsOf(arg));
    await controller.handleEvent(arg.runId, arg.event as unknown as EngineEvent);
    return true;
  });

  // Internal: the reviews as plain data, for tests and bug reports.
  register('skillopt.review.inspect', (arg: unknown) => {
    const uri = typeof arg === 'string' ? arg : undefined;
    return controller
      .all()
      .filter((t) => !uri || t.uri.toString() === uri)
      .map((t) => {
        const s = t.session;
        return {
          uri: t.uri.toString(),
          key: s.key,
          ...(s.init.file ? { file: s.init.file } : {}),
          ...(t.group ? { files: t.group.members.map((m) => m.fileName) } : {}),
          runId: s.init.runId,
          step: s.init.step,
          origin: s.init.origin,
          mode: s.init.mode,
          live: s.init.live,
          phase: s.phase,
          waiting: s.waiting,
          perEdit: s.perEdit,
          verdict: s.verdict,
          owners: s.ownerList().map((o) => ({
            id: o.id,
            fate: o.fate,
            ...(o.decidedBy ? { decidedBy: o.decidedBy } : {}),
            ...(o.reason ? { reason: o.reason } : {}),
            line: s.ownerLine(o.id),
          })),
          segments: s.allSegments().map((g) => ({
            owner: g.owner,
            kind: g.kind,
            start: g.start,
            lines: g.lines.length,
            present: g.present,
          })),
          drawn: view.drawn.get(t.uri.toString()),
          sent: t.sent,
        };
      });
  });
}
