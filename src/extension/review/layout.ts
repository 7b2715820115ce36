/**
 * Pure layout of a candidate's changes: which edit owns which changed line, how the changes sit in
 * the previous skill, and where they land in the document the person has open (which may have
 * drifted from the skill the optimizer saw). No `vscode` import, so all of it is unit-tested.
 *
 * Line numbers here are 0-based indices into `text.split('\n')`, the same numbering VS Code uses
 * (a text ending in a newline has a last, empty line).
 */
import type { CandidateEdit, CandidateHunk } from '../../protocol/events';
import { applyEdits } from '../../engine/skill/applyEdits';
import { lineHunks } from '../../engine/skill/hunks';
import { SKILL_FILE } from '../../engine/skill/package/text';

/** Owner id of lines no edit explains (slow-update rewrites have no edits at all). */
export const hunkOwnerPrefix = 'hunk:';

export function hunkOwner(hunkId: string): string {
  return `${hunkOwnerPrefix}${hunkId}`;
}

export function isHunkOwner(owner: string): boolean {
  return owner.startsWith(hunkOwnerPrefix);
}

/**
 * One reviewable change at one place of the previous text: `removed` lines starting at `at`,
 * replaced by `added` lines. A pure insertion has no removed lines and goes before line `at`.
 */
export interface Change {
  /** Stable id of the edit that produced these lines, or `hunk:<hunk id>`. */
  owner: string;
  at: number;
  removed: string[];
  added: string[];
}

/** A change placed in the open document: `docAt` is where `at` landed. */
export interface PlacedChange extends Change {
  docAt: number;
}

export interface Placement {
  placed: PlacedChange[];
  /** Changes whose lines the document no longer has in the same shape (the person rewrote them). */
  conflicts: Change[];
}

export function splitLines(text: string): string[] {
  return text.replace(/\r\n/g, '\n').split('\n');
}

const norm = (s: string): string => s.trim();

function nonEmptyLines(text: string | undefined): string[] {
  return (text ?? '')
    .split(/\r?\n/)
    .map(norm)
    .filter((l) => l.length > 0);
}

/** The edits of a skill folder's candidate that change `file` (an edit without a file changes SKILL.md). */
export function editsOfFile(edits: readonly CandidateEdit[], file = SKILL_FILE): CandidateEdit[] {
  return edits.filter((e) => (e.file ?? SKILL_FILE) === file);
}

/** Edits that changed the text: statuses from the apply report, or no status at all (older runs). */
function appliedEdits(edits: readonly CandidateEdit[]): CandidateEdit[] {
  return edits.filter((e) => e.status === undefined || e.status.startsWith('applied'));
}

/** How strongly `line` is explained by one of `texts`: 2 = the same line, 1 = one contains the other. */
function matchStrength(line: string, texts: readonly string[]): number {
  const l = norm(line);
  if (!l) return 0;
  let best = 0;
  for (const t of texts) {
    if (t === l) return 2;
    // Short fragments ("-", "**") would match everything; a replace inside a line needs a real phrase.
    if (Math.min(t.length, l.length) >= 4 && (l.includes(t) || t.includes(l))) best = 1;
  }
  return best;
}

type Side = 'added' | 'removed';

/** Owner of each line of one side of a hunk, before blank lines are attached. */
function rawOwners(
  lines: readonly string[],
  side: Side,
  edits: readonly CandidateEdit[],
): Array<string | undefined> {
  const texts = edits.map((e) => {
    if (side === 'added') return nonEmptyLines(e.content);
    // Only replace and delete remove the lines they name; insert_after's target stays.
    return e.op === 'replace' || e.op === 'delete' ? nonEmptyLines(e.target) : [];
  });
  return lines.map((line) => {
    let owner: string | undefined;
    let strength = 0;
    edits.forEach((e, i) => {
      const s = matchStrength(line, texts[i] ?? []);
      if (s > strength) {
        strength = s;
        owner = e.id;
      }
    });
    return owner;
  });
}

/**
 * Blank lines belong to the owned line before them (the diff puts an edit's separating blank line
 * after its text), or to the next one at the start of a run; lines nothing explains belong to the
 * hunk itself.
 */
function attachBlanks(
  lines: readonly string[],
  owners: Array<string | undefined>,
  fallback: string,
): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const own = owners[i];
    if (own !== undefined) {
      out.push(own);
      continue;
    }
    if (norm(lines[i] ?? '') !== '') {
      out.push(fallback);
      continue;
    }
    let prev: string | undefined;
    for (let j = i - 1; j >= 0 && prev === undefined; j--) {
      if (norm(lines[j] ?? '') !== '') prev = owners[j] ?? fallback;
    }
    let next: string | undefined;
    for (let j = i + 1; j < lines.length && next === undefined && prev === undefined; j++) {
      if (norm(lines[j] ?? '') !== '') next = owners[j] ?? fallback;
    }
    out.push(prev ?? next ?? fallback);
  }
  return out;
}

interface Run {
  owner: string;
  lines: string[];
}

function runsOf(lines: readonly string[], owners: readonly string[]): Run[] {
  const runs: Run[] = [];
  lines.forEach((line, i) => {
    const owner = owners[i] ?? '';
    const last = runs.at(-1);
    if (last && last.owner === owner) last.lines.push(line);
    else runs.push({ owner, lines: [line] });
  });
  return runs;
}

/**
 * Splits one hunk into per-owner changes. The removed and added runs are interleaved so that each
 * owner's added lines follow its own removed lines; both sides keep their order, so accepting every
 * change gives exactly the candidate and rejecting every change gives exactly the previous text.
 */
export function splitHunk(hunk: CandidateHunk, edits: readonly CandidateEdit[]): Change[] {
  const fallback = hunkOwner(hunk.id);
  const applied = appliedEdits(edits);
  const removedOwners = attachBlanks(hunk.removed, rawOwners(hunk.removed, 'removed', applied), fallback);
  const addedOwners = attachBlanks(hunk.added, rawOwners(hunk.added, 'added', applied), fallback);
  const rRuns = runsOf(hunk.removed, removedOwners);
  const aRuns = runsOf(hunk.added, addedOwners);
  // Unified-diff numbering: a side with no lines names the line *after which* the change sits.
  let cursor = hunk.oldLines === 0 ? hunk.oldStart : hunk.oldStart - 1;
  const changes: Change[] = [];
  let i = 0;
  let j = 0;
  const ownerAddsLater = (owner: string, from: number): boolean =>
    aRuns.slice(from).some((r) => r.owner === owner);
  while (i < rRuns.length || j < aRuns.length) {
    const r = rRuns[i];
    const a = aRuns[j];
    if (r && (!a || r.owner === a.owner || !ownerAddsLater(r.owner, j))) {
      const change: Change = { owner: r.owner, at: cursor, removed: [...r.lines], added: [] };
      cursor += r.lines.length;
      i++;
      const moreRemovedOfOwner = rRuns.slice(i).some((x) => x.owner === r.owner);
      const next = aRuns[j];
      if (next && next.owner === r.owner && !moreRemovedOfOwner) {
        change.added = [...next.lines];
        j++;
      }
      changes.push(change);
    } else if (a) {
      changes.push({ owner: a.owner, at: cursor, removed: [], added: [...a.lines] });
      j++;
    }
  }
  return changes;
}

/** One line of the merged view: an original line (maybe removed by an edit) or a line an edit added. */
interface Item {
  text: string;
  added?: string;
  removed?: string;
}

/**
 * Changes traced edit by edit: each applied edit is replayed on its own with the engine's
 * `applyEdits`, so every changed line is attributed by construction rather than guessed from one
 * diff of the whole candidate (which can pair one edit's removed line with another's added line).
 * Undefined when the replay does not reproduce the candidate, or when an edit rewrote lines
 * another edit added (those cannot be accepted independently).
 */
export function traceChanges(
  previous: string,
  candidate: string,
  edits: readonly CandidateEdit[],
  file = SKILL_FILE,
): Change[] | undefined {
  // A skill folder's edits of other files change nothing in this file, the text traced here.
  const applied = editsOfFile(appliedEdits(edits), file);
  if (applied.length === 0) return undefined;
  const prev = previous.replace(/\r\n/g, '\n');
  const cand = candidate.replace(/\r\n/g, '\n');
  for (const anchorMode of ['strict', 'reference'] as const) {
    let doc = prev;
    const items: Item[] = splitLines(prev).map((text) => ({ text }));
    let clean = true;
    for (const e of applied) {
      const edit = {
        id: e.id,
        op: e.op,
        ...(e.target !== undefined ? { target: e.target } : {}),
        ...(e.content !== undefined ? { content: e.content } : {}),
      };
      const next = applyEdits(doc, [edit], { anchorMode }).text;
      if (next === doc) continue;
      // Bottom-up, so the visible line numbers of earlier hunks stay valid.
      for (const h of [...lineHunks(doc, next)].sort((a, b) => b.oldStart - a.oldStart)) {
        const visible = items.map((it, i) => ({ it, i })).filter((x) => x.it.removed === undefined);
        let insertAt: number;
        if (h.oldLines > 0) {
          const hit = visible.slice(h.oldStart - 1, h.oldStart - 1 + h.oldLines);
          for (const { it } of hit) {
            if (it.added !== undefined) clean = false;
            it.removed = e.id;
          }
          insertAt = (hit.at(-1)?.i ?? items.length - 1) + 1;
        } else {
          insertAt = h.oldStart === 0 ? 0 : (visible[h.oldStart - 1]?.i ?? items.length - 1) + 1;
        }
        items.splice(insertAt, 0, ...h.added.map((text) => ({ text, added: e.id })));
      }
      doc = next;
    }
    if (!clean) return undefined;
    const shown = items.filter((it) => it.removed === undefined).map((it) => it.text);
    if (doc !== cand || shown.join('\n') !== cand) continue;
    return changesFromItems(items);
  }
  return undefined;
}

function changesFromItems(items: readonly Item[]): Change[] {
  const changes: Change[] = [];
  let line = 0;
  let open: Change | undefined;
  for (const it of items) {
    if (it.removed === undefined && it.added === undefined) {
      open = undefined;
      line++;
      continue;
    }
    const owner = it.removed ?? it.added ?? '';
    if (it.removed !== undefined) {
      if (!open || open.owner !== owner || open.added.length > 0) {
        open = { owner, at: line, removed: [], added: [] };
        changes.push(open);
      }
      open.removed.push(it.text);
      line++;
    } else {
      if (!open || open.owner !== owner) {
        open = { owner, at: line, removed: [], added: [] };
        changes.push(open);
      }
      open.added.push(it.text);
    }
  }
  return changes;
}

/**
 * Every change of a candidate to one file (SKILL.md unless named), in document order: traced edit
 * by edit when the edits reproduce the candidate, otherwise split from the whole diff's hunks.
 */
export function candidateChanges(
  previous: string,
  candidate: string,
  hunks: readonly CandidateHunk[],
  edits: readonly CandidateEdit[],
  file = SKILL_FILE,
): Change[] {
  const own = editsOfFile(edits, file);
  return (
    traceChanges(previous, candidate, own, file) ??
    [...hunks].sort((x, y) => x.oldStart - y.oldStart).flatMap((h) => splitHunk(h, own))
  );
}

/** Owners in first-appearance order. */
export function ownersOf(changes: readonly Change[]): string[] {
  return [...new Set(changes.map((c) => c.owner))];
}

/** The previous text rebuilt from the candidate and its hunks (the diff read backwards). */
export function previousFromCandidate(candidate: string, hunks: readonly CandidateHunk[]): string {
  const lines = splitLines(candidate);
  // Bottom-up, so earlier hunks' new-side numbers stay valid.
  for (const h of [...hunks].sort((x, y) => y.newStart - x.newStart)) {
    const start = h.newLines === 0 ? h.newStart : h.newStart - 1;
    lines.splice(start, h.newLines, ...h.removed);
  }
  return lines.join('\n');
}

/**
 * Where each change lands in `doc` when the document differs from the text the optimizer edited.
 * Lines the person left alone map by offset; a change whose lines the person rewrote cannot be
 * placed and is reported as a conflict (it stays reviewable in the diff view).
 */
export function placeChanges(previous: string, doc: string, changes: readonly Change[]): Placement {
  if (previous.replace(/\r\n/g, '\n') === doc.replace(/\r\n/g, '\n')) {
    return { placed: changes.map((c) => ({ ...c, docAt: c.at })), conflicts: [] };
  }
  const drift = lineHunks(previous.replace(/\r\n/g, '\n'), doc.replace(/\r\n/g, '\n')).map((d) => ({
    // 0-based [start, end) of the lines the person changed, or an insertion before line `start`.
    start: d.oldLines === 0 ? d.oldStart : d.oldStart - 1,
    end: d.oldLines === 0 ? d.oldStart : d.oldStart - 1 + d.oldLines,
    delta: d.newLines - d.oldLines,
  }));
  const docLines = splitLines(doc);
  const placed: PlacedChange[] = [];
  const conflicts: Change[] = [];
  for (const c of changes) {
    const from = c.at;
    const to = c.at + c.removed.length;
    let delta = 0;
    let blocked = false;
    for (const d of drift) {
      if (d.end <= from && (d.start < from || d.start === d.end)) {
        delta += d.delta;
      } else if (c.removed.length > 0 ? d.start < to && d.end > from : d.start < from && d.end > from) {
        blocked = true;
      } else if (c.removed.length > 0 && d.start === d.end && d.start > from && d.start < to) {
        blocked = true;
      }
    }
    const docAt = from + delta;
    const same = c.removed.every((line, k) => docLines[docAt + k] === line);
    if (blocked || !same || docAt < 0 || docAt > docLines.length) conflicts.push(c);
    else placed.push({ ...c, docAt });
  }
  return { placed, conflicts };
}

/**
 * Placement when the document already holds the candidate (e.g. a human-first candidate the person
 * already pruned): the added lines are where the candidate has them.
 */
export function placeOnCandidate(changes: readonly Change[]): PlacedChange[] {
  let delta = 0;
  return changes.map((c) => {
    const placed = { ...c, docAt: c.at + delta };
    delta += c.added.length - c.removed.length;
    return placed;
  });
}
