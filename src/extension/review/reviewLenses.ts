/**
 * The CodeLens line of a review: its title (what the candidate is, what the gate said), the actions
 * that decide it, one lens per other file of a skill folder's candidate, and per edit its Accept and
 * Reject. Derived from the session each time VS Code asks (ReviewView relays the request).
 */
import * as vscode from 'vscode';
import { describeGateTest, describeItemRegressions } from '../../protocol/gateText';
import { candidateName } from '../../protocol/webview';
import { isInconclusive } from '../../protocol/vocabulary';
import { editTitle } from '../../protocol/words';
import { Commands } from '../constants';
import type { ReviewController, TrackedSession } from './controller';
import { isHunkOwner } from './layout';
import { endedTitle } from './outcomes';
import { membersOf } from './registry';
import type { OwnerState, ReviewSession } from './session';

/** The arguments of a review lens's command: the document, the review and, per edit, its id. */
export interface EditArgs {
  uri: string;
  key: string;
  editId?: string;
  reason?: string;
}

/** What a lens (or a line the gate dropped) calls an edit, or a hunk of a candidate without edits. */
export function ownerTitle(o: OwnerState, s: ReviewSession): string {
  if (isHunkOwner(o.id)) return s.init.origin === 'slow_update' ? 'slow update' : 'change';
  const title = editTitle({
    ...(o.edit?.op ? { op: o.edit.op } : {}),
    ...(o.edit?.support_count !== undefined ? { supportCount: o.edit.support_count } : {}),
    ...(o.edit?.source_type ? { sourceType: o.edit.source_type } : {}),
  });
  // Two edits pulling the same rule opposite ways: say so where the person decides.
  return o.edit?.conflicts_with?.length ? `⚠ conflicts with another edit · ${title}` : title;
}

function what(s: ReviewSession): string {
  return candidateName(s.init.origin, s.init.step, s.init.epoch);
}

const score = (v: number): string => v.toFixed(3);

/** The lenses of `document`'s review (or of its ended run's review). */
export function reviewLenses(controller: ReviewController, document: vscode.TextDocument): vscode.CodeLens[] {
  const t = controller.sessionFor(document.uri);
  if (!t || t.session.phase === 'done') return endedLenses(controller, document.uri);
  const s = t.session;
  const args = (editId?: string): EditArgs => ({
    uri: document.uri.toString(),
    key: s.key,
    ...(editId ? { editId } : {}),
  });
  const top = new vscode.Range(0, 0, 0, 0);
  const lenses: vscode.CodeLens[] = [];
  const lens = (range: vscode.Range, title: string, command = '', a?: EditArgs, tooltip?: string): void => {
    lenses.push(
      new vscode.CodeLens(range, {
        title,
        command,
        ...(a ? { arguments: [a] } : {}),
        ...(tooltip ? { tooltip } : {}),
      }),
    );
  };
  const placed = s.placedOwners();
  const conflicts = s.withFate('conflict').length;
  const unplaced = conflicts
    ? ` · ${conflicts} edit${conflicts === 1 ? '' : 's'} not shown here (see diff)`
    : '';
  const count = `${placed.length} edit${placed.length === 1 ? '' : 's'}`;
  switch (s.phase) {
    case 'awaiting-gate':
      lens(
        top,
        s.startedOnCandidate || s.withFate('accepted').length
          ? `$(sync~spin) SkillOpt ${what(s)}: the gate is scoring your kept edits`
          : `$(sync~spin) SkillOpt ${what(s)}: the gate is scoring the candidate (${count})${unplaced}`,
      );
      break;
    case 'review': {
      if (!s.perEdit) {
        const g = s.gateScores;
        const vs = g ? ` (${score(g.candidateScore)} vs ${score(g.currentScore)})` : '';
        // What the gate found beyond the means: the paired test and any broken items.
        const evidence = [
          ...(g?.gateTest ? [describeGateTest(g.gateTest)] : []),
          ...(g?.itemRegressions?.items.length ? [describeItemRegressions(g.itemRegressions)] : []),
        ]
          .map((t) => ` · ${t}`)
          .join('');
        lens(
          top,
          g?.gateTest?.verdict === 'inconclusive'
            ? `$(question) SkillOpt ${what(s)}: the gate could not tell it from noise${vs}${evidence}; the run waits for you${unplaced}`
            : `$(pass) SkillOpt ${what(s)} passed the gate${vs}${evidence}; the run waits for you${unplaced}`,
        );
        lens(
          top,
          'Accept Candidate',
          'skillopt.review.acceptAll',
          args(),
          'Make this candidate the current skill',
        );
        lens(
          top,
          'Reject Candidate…',
          'skillopt.review.rejectAll',
          args(),
          'Drop this candidate, with an optional reason',
        );
      } else {
        const waiting = s.waiting ? '; the run waits for you' : '';
        const gate = s.verdict
          ? ` · gate ${s.verdict.accepted ? 'accepted' : 'rejected'} it (${score(s.verdict.candidateScore)})`
          : '';
        lens(top, `$(git-compare) SkillOpt ${what(s)}: ${count} to review${waiting}${gate}${unplaced}`);
        lens(top, 'Accept All', 'skillopt.review.acceptAll', args(), 'Accept every edit of this candidate');
        lens(
          top,
          'Reject All…',
          'skillopt.review.rejectAll',
          args(),
          'Reject every edit, with an optional reason',
        );
      }
      break;
    }
    case 'verdict': {
      const v = s.verdict;
      if (v?.accepted || (!v && s.withFate('accepted').length)) {
        lens(
          top,
          `$(pass-filled) Gate accepted ${what(s)}${v ? ` (${score(v.candidateScore)})` : ''}${unplaced}`,
        );
        lens(
          top,
          'Revert Candidate…',
          'skillopt.review.rejectAll',
          args(),
          'Overrule the gate: go back to the previous skill',
        );
      } else {
        // The paired gate's "could not tell" is not a rejection: not kept, not proven worse.
        lens(
          top,
          v && isInconclusive(v.action)
            ? `$(question) The gate could not tell ${what(s)} from noise (${score(v.candidateScore)} against ${score(v.currentScore)}); not kept`
            : `$(error) Gate rejected ${what(s)}${v ? ` (${score(v.candidateScore)}, needed more than ${score(v.currentScore)})` : ''}`,
        );
        lens(
          top,
          'Accept Anyway',
          'skillopt.review.acceptAll',
          args(),
          'Overrule the gate: make this candidate current',
        );
      }
      lens(top, 'Dismiss', 'skillopt.review.dismiss', args(), 'Stop showing this verdict');
      break;
    }
  }
  lens(top, 'Open in Diff View', 'skillopt.review.openDiff', args(), 'Previous skill against the candidate');
  // Right after the review's title, where the line of lenses is never cut off.
  lenses.splice(1, 0, ...otherFileLenses(t, top));

  for (const id of placed) {
    const o = s.owners.get(id);
    const line = s.ownerLine(id);
    if (!o || line === undefined) continue;
    const range = new vscode.Range(
      Math.min(line, document.lineCount - 1),
      0,
      Math.min(line, document.lineCount - 1),
      0,
    );
    if (s.phase === 'review' && o.fate === 'pending') {
      if (s.perEdit) {
        lens(
          range,
          '$(check) Accept',
          'skillopt.review.acceptEdit',
          args(id),
          `Keep this ${o.edit?.op ?? 'change'}`,
        );
        lens(
          range,
          '$(close) Reject…',
          'skillopt.review.rejectEdit',
          args(id),
          'Drop it, with an optional reason',
        );
      }
      lens(range, ownerTitle(o, s));
    } else if (s.phase === 'verdict' && o.fate === 'accepted') {
      lens(range, `$(check) kept by the gate · ${ownerTitle(o, s)}`);
    }
  }
  return lenses;
}

/** A skill folder's candidate: one lens per other file it changes, opening that file's review. */
function otherFileLenses(t: TrackedSession, top: vscode.Range): vscode.CodeLens[] {
  return membersOf(t)
    .filter((m) => m !== t)
    .map((m) => {
      const s = m.session;
      const open = s.placedOwners().filter((id) => s.owners.get(id)?.fate === 'pending').length;
      const state =
        s.phase === 'review' && open ? `${open} to review` : s.phase === 'done' ? 'decided' : 'shown';
      const isNew = m.uri.scheme === 'untitled' ? ' (new file)' : '';
      return new vscode.CodeLens(top, {
        title: `$(file) ${m.fileName}${isNew}: ${state}`,
        command: 'vscode.open',
        // Beside the file the lens is on, so both files of the candidate show at once.
        arguments: [m.uri, { viewColumn: vscode.ViewColumn.Beside, preview: false }],
        tooltip: `This candidate also changes ${m.fileName}; open its review`,
      });
    });
}

/** An ended run's review: one line saying so, Resume, Dismiss; nothing that could decide. */
function endedLenses(controller: ReviewController, uri: vscode.Uri): vscode.CodeLens[] {
  const e = controller.ended.get(uri.toString());
  if (!e) return [];
  const top = new vscode.Range(0, 0, 0, 0);
  const args: EditArgs = { uri: uri.toString(), key: e.key };
  return [
    new vscode.CodeLens(top, { title: endedTitle(e), command: '' }),
    new vscode.CodeLens(top, {
      title: 'Resume Run',
      command: Commands.resumeRun,
      arguments: [e.runId],
      tooltip: 'Continue the run from its last finished step',
    }),
    new vscode.CodeLens(top, {
      title: 'Dismiss',
      command: 'skillopt.review.dismiss',
      arguments: [args],
      tooltip: 'Stop showing this line',
    }),
  ];
}
