/** Reviews waiting for their skill document to open, replayed when it does. */
import * as vscode from 'vscode';
import type { EngineEvent } from '../../protocol/events';
import type { RunHints } from './reviewContext';
import type { CandidateReady } from './runFiles';

interface Parked {
  runId: string;
  step: number;
  events: EngineEvent[];
  hints: RunHints;
}

/** The latest candidate (and what followed it) for each skill that is not open. */
export class ParkedReviews {
  private readonly bySkill = new Map<string, Parked>();

  /** A newer candidate replaces whatever older one waited for the same skill. */
  park(skillPath: string, runId: string, event: CandidateReady, hints: RunHints): void {
    this.bySkill.set(vscode.Uri.file(skillPath).toString(), {
      runId,
      step: event.step,
      events: [event],
      hints,
    });
  }

  /** A closed document's live review, with the engine's pause for it if there was one. */
  parkSession(
    skillPath: string,
    ready: CandidateReady,
    init: { runId: string; step: number; mode: RunHints['mode']; live: boolean; runDir?: string },
    request?: EngineEvent,
  ): void {
    this.park(skillPath, init.runId, ready, {
      ...(init.mode ? { mode: init.mode } : {}),
      live: init.live,
      ...(init.runDir ? { runDir: init.runDir } : {}),
      skillPath,
    });
    // Without the request, the reopened document would show a candidate nobody is asked about.
    if (request) this.followUp(init.runId, init.step, request);
  }

  /** A verdict or review request for a parked candidate joins its chain. */
  followUp(runId: string, step: number, event: EngineEvent): boolean {
    for (const p of this.bySkill.values()) {
      if (p.runId === runId && p.step === step) {
        p.events.push(event);
        return true;
      }
    }
    return false;
  }

  /** The run ended: what it parked waits for nothing any more. */
  dropRun(runId: string): void {
    for (const [doc, p] of this.bySkill) if (p.runId === runId) this.bySkill.delete(doc);
  }

  /** Removes and returns what waited for this document. */
  take(uri: vscode.Uri): Parked | undefined {
    const p = this.bySkill.get(uri.toString());
    this.bySkill.delete(uri.toString());
    return p;
  }
}
