import { createHash } from 'node:crypto';
import { SkillOptError, messageOf } from '../errors';
import {
  containsMarker,
  pyRstrip,
  pyStrip,
  scanMarkers,
  spansFromHits,
  stripMarkers,
  type MarkerHit,
  type ProtectedSpan,
} from './markers';
import { FRONT_MATTER_STATUS, frontMatterBreak } from './frontMatterGuard';
import { withLfLineEndings } from './lineEndings';
import { applyPackageEdits, namesOtherFiles } from './package/edits';
import type { PackageEditPolicy } from './package/policy';
import { isPackageText } from './package/text';

/** One edit operation as analysts, merges and rankers emit it (reference `Edit`, plus our id). */
export interface Edit {
  op: string;
  target?: string;
  content?: string;
  id?: string;
  support_count?: number;
  source_type?: 'failure' | 'success' | 'mixed';
  merge_level?: number;
  update_origin?: string;
  [k: string]: unknown;
}

/**
 * `strict` (default) refuses an anchor that occurs more than once; `reference` binds it to the
 * first occurrence as the Python reference does, but says so in the status.
 */
export type AnchorMode = 'strict' | 'reference';

export interface ApplyOptions {
  anchorMode?: AnchorMode;
  /** What a skill package's edits may change (optimizer.package_edits); default the config default. */
  packagePolicy?: PackageEditPolicy;
  /** False for a package's other files: only SKILL.md's front matter is guarded (frontMatterGuard.ts). */
  skillFile?: boolean;
}

export type EditStatus =
  | 'applied_append'
  | 'applied_append_before_protected_region'
  | 'applied_insert_after'
  | 'applied_insert_after_first_of_many'
  | 'applied_insert_after_fallback_append'
  | 'applied_insert_after_fallback_before_protected_region'
  | 'applied_replace'
  | 'applied_replace_first_of_many'
  | 'applied_delete'
  | 'applied_delete_first_of_many'
  | 'skipped_protected_region'
  | 'skipped_ambiguous_target'
  | 'skipped_replace_missing_target'
  | 'skipped_replace_target_not_found'
  | 'skipped_delete_missing_target'
  | 'skipped_delete_target_not_found'
  | 'skipped_unknown_op'
  /** A skill package's edit of a file the policy does not let it change (`error` says why). */
  | 'skipped_outside_policy'
  /** An edit of SKILL.md that broke what the agent hosts read in its front matter (`error` says how). */
  | typeof FRONT_MATTER_STATUS
  | 'error';

/** Row of `edit_apply_report.json`: the reference's keys plus `id`, `occurrences`, `warnings`. */
export interface EditReportRow {
  /** 1-based position in the edit list. */
  index: number;
  id: string;
  op: string;
  /** First 200 characters of the raw target. */
  target: string;
  /** First 200 characters of the cleaned content. */
  content_preview: string;
  status: EditStatus;
  /** Valid (unprotected) occurrences of an ambiguous target. */
  occurrences?: number;
  /** `content_markers_stripped`: marker strings were removed from the content. */
  warnings?: string[];
  error?: string;
  /** The package file the edit names, when it is not SKILL.md. */
  file?: string;
}

export interface ApplyResult {
  text: string;
  report: EditReportRow[];
}

export interface ReportSummary {
  total: number;
  applied: number;
  skipped: number;
  errors: number;
}

export const CONTENT_MARKERS_STRIPPED = 'content_markers_stripped';
/** Set when the post-edit check caught a change to a protected block and undid the edit. */
export const PROTECTED_REGION_GUARD = 'protected_region_guard';

const PREVIEW_CHARS = 200;

/** First `n` code points, as Python's `s[:n]` counts them. */
function head(s: string, n: number): string {
  if (s.length <= n) return s;
  let units = 0;
  let points = 0;
  while (units < s.length && points < n) {
    const code = s.charCodeAt(units);
    units += code >= 0xd800 && code <= 0xdbff && units + 1 < s.length ? 2 : 1;
    points++;
  }
  return s.slice(0, units);
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function stringField(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** Stable id from op, target and content, so the same edit gets the same id in every run. */
export function editId(edit: {
  op?: unknown;
  target?: unknown;
  content?: unknown;
  [k: string]: unknown;
}): string {
  const key = JSON.stringify([stringField(edit.op), stringField(edit.target), stringField(edit.content)]);
  return `e-${sha256Hex(key).slice(0, 10)}`;
}

/**
 * Copies of the edits with an `id` each. Existing ids are kept; exact duplicates get `-2`, `-3`…
 * so ids stay unique within the list.
 */
export function assignEditIds(edits: readonly Edit[]): Edit[] {
  const used = new Set<string>();
  for (const e of edits) if (typeof e.id === 'string' && e.id) used.add(e.id);
  return edits.map((e) => {
    if (typeof e.id === 'string' && e.id) return { ...e };
    const base = editId(e);
    let id = base;
    for (let n = 2; used.has(id); n++) id = `${base}-${n}`;
    used.add(id);
    return { ...e, id };
  });
}

export function summarizeReport(report: readonly EditReportRow[]): ReportSummary {
  let applied = 0;
  let skipped = 0;
  let errors = 0;
  for (const row of report) {
    if (row.status.startsWith('applied')) applied++;
    else if (row.status.startsWith('skipped')) skipped++;
    else if (row.status === 'error') errors++;
  }
  return { total: report.length, applied, skipped, errors };
}

/** Everything a protected block is made of: the marker sequence and the text of each block. */
function protectedSignature(
  text: string,
  hits: readonly MarkerHit[],
  spans: readonly ProtectedSpan[],
): string {
  const markers = hits.map((h) => h.marker).join('\n');
  return `${markers}\u0000${spans.map((s) => text.slice(s.start, s.end)).join('\u0000')}`;
}

function overlapsAny(start: number, end: number, spans: readonly ProtectedSpan[]): boolean {
  for (const s of spans) if (start < s.end && end > s.start) return true;
  return false;
}

/** Strictly inside a block: inserting there would put text between its markers. */
function insideAny(pos: number, spans: readonly ProtectedSpan[]): boolean {
  for (const s of spans) if (pos > s.start && pos < s.end) return true;
  return false;
}

/** Where `insert_after` puts its text: just past the newline ending the line the target ends on. */
function lineEndAfter(doc: string, targetEnd: number): number {
  const nl = doc.indexOf('\n', targetEnd);
  return nl === -1 ? doc.length : nl + 1;
}

interface Occurrences {
  /** Occurrences that may be edited (not touching a protected block). */
  valid: number;
  /** Occurrences that touch a protected block and are ignored. */
  protectedHits: number;
  first: number;
}

/** All occurrences (overlapping ones included) of `target`, split by whether they may bind. */
function findOccurrences(
  doc: string,
  target: string,
  spans: readonly ProtectedSpan[],
  forInsert: boolean,
): Occurrences {
  const out: Occurrences = { valid: 0, protectedHits: 0, first: -1 };
  // Occurrences come in ascending order, so one line end serves every occurrence on that line
  // (keeps a long single-line document linear).
  let lineEnd = -1;
  for (let i = doc.indexOf(target); i !== -1; i = doc.indexOf(target, i + 1)) {
    const end = i + target.length;
    let blocked = overlapsAny(i, end, spans);
    if (!blocked && forInsert) {
      if (end >= lineEnd) lineEnd = lineEndAfter(doc, end);
      blocked = insideAny(lineEnd, spans);
    }
    if (blocked) {
      out.protectedHits++;
    } else {
      if (out.first === -1) out.first = i;
      out.valid++;
    }
  }
  return out;
}

/** Reference append: before the earliest protected block (keeping blocks at the tail) or at the end. */
function appendText(
  doc: string,
  content: string,
  spans: readonly ProtectedSpan[],
): { text: string; before: boolean } {
  const first = spans[0];
  if (first) {
    const before = pyRstrip(doc.slice(0, first.start));
    return { text: `${before}\n\n${content}\n\n${doc.slice(first.start)}`, before: true };
  }
  return { text: `${pyRstrip(doc)}\n\n${content}\n`, before: false };
}

interface EditOutcome {
  text: string;
  status: EditStatus;
  occurrences?: number;
}

type AnchoredOp = 'insert_after' | 'replace' | 'delete';

/** Applies one edit to `doc`; returns `doc` itself when the edit is skipped. */
function applyOne(
  doc: string,
  op: string,
  target: string,
  content: string,
  spans: readonly ProtectedSpan[],
  mode: AnchorMode,
): EditOutcome {
  const skip = (status: EditStatus, occurrences?: number): EditOutcome =>
    occurrences === undefined ? { text: doc, status } : { text: doc, status, occurrences };

  // A target that contains a marker can only ever bind to a block boundary.
  if (target && containsMarker(target)) return skip('skipped_protected_region');
  const occ = target
    ? findOccurrences(doc, target, spans, op === 'insert_after')
    : { valid: 0, protectedHits: 0, first: -1 };
  // Like the reference, a target that only exists inside a protected block skips the edit whatever the op.
  if (occ.valid === 0 && occ.protectedHits > 0) return skip('skipped_protected_region');

  if (op === 'append') {
    const r = appendText(doc, content, spans);
    return { text: r.text, status: r.before ? 'applied_append_before_protected_region' : 'applied_append' };
  }
  if (op !== 'insert_after' && op !== 'replace' && op !== 'delete') return skip('skipped_unknown_op');
  const anchored: AnchoredOp = op;

  if (anchored === 'insert_after' && occ.valid === 0) {
    const r = appendText(doc, content, spans);
    return {
      text: r.text,
      status: r.before
        ? 'applied_insert_after_fallback_before_protected_region'
        : 'applied_insert_after_fallback_append',
    };
  }
  if (anchored !== 'insert_after') {
    if (!target) return skip(`skipped_${anchored}_missing_target`);
    if (occ.valid === 0) return skip(`skipped_${anchored}_target_not_found`);
  }

  const many = occ.valid > 1;
  if (many && mode === 'strict') return skip('skipped_ambiguous_target', occ.valid);
  const at = occ.first;
  let text: string;
  if (anchored === 'insert_after') {
    const insertAt = lineEndAfter(doc, at + target.length);
    text = `${doc.slice(0, insertAt)}\n${content}\n${doc.slice(insertAt)}`;
  } else {
    const replacement = anchored === 'replace' ? content : '';
    text = doc.slice(0, at) + replacement + doc.slice(at + target.length);
  }
  if (!many) return { text, status: `applied_${anchored}` };
  return { text, status: `applied_${anchored}_first_of_many`, occurrences: occ.valid };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorRow(index: number, id: string, message: string): EditReportRow {
  return { index, id, op: '', target: '', content_preview: '', status: 'error', error: message };
}

/**
 * Applies edits in list order, each to the previous result, with the reference's statuses. Protected
 * blocks never change: targets touching them are ignored, marker strings are stripped from content,
 * and every edit is re-checked afterwards and undone if a block's bytes moved. A skill package's
 * edits go to the file each names (package/edits.ts).
 */
export function applyEdits(skill: string, edits: readonly Edit[], options: ApplyOptions = {}): ApplyResult {
  const folder = options.packagePolicy?.folder === true;
  if (Array.isArray(edits) && (folder || isPackageText(skill) || namesOtherFiles(edits)))
    return applyPackageEdits(skill, edits, options, applyToText);
  return applyToText(skill, edits, options);
}

/** One file's edits, in its own line endings (a CRLF file is edited as `\n` and written back as CRLF). */
function applyToText(skill: string, edits: readonly Edit[], options: ApplyOptions = {}): ApplyResult {
  return withLfLineEndings(skill, (lf) => applyToLfText(lf, edits, options));
}

function applyToLfText(skill: string, edits: readonly Edit[], options: ApplyOptions): ApplyResult {
  if (!Array.isArray(edits)) {
    throw new SkillOptError('llm-reply', 'the edits of a patch must be a list', {
      key: 'edits',
      fix: 'return "edits" as a JSON array of {op, target, content} objects',
    });
  }
  const mode: AnchorMode = options.anchorMode ?? 'strict';
  let doc = skill;
  let hits = scanMarkers(doc);
  let spans = spansFromHits(hits);
  const signature = protectedSignature(doc, hits, spans);
  const report: EditReportRow[] = [];

  edits.forEach((raw: unknown, i) => {
    const index = i + 1;
    if (!isRecord(raw)) {
      report.push(errorRow(index, '', 'edit is not an object'));
      return;
    }
    const id = typeof raw.id === 'string' && raw.id ? raw.id : editId(raw);
    try {
      const { op: rawOp, target: rawTarget, content: rawContent } = raw;
      if (rawTarget != null && typeof rawTarget !== 'string') throw new Error('target must be a string');
      if (rawContent != null && typeof rawContent !== 'string') throw new Error('content must be a string');
      const op = typeof rawOp === 'string' ? rawOp : '';
      const target = rawTarget ?? '';
      const trimmed = pyStrip(rawContent ?? '');
      const stripped = stripMarkers(trimmed);
      const content = stripped === trimmed ? trimmed : pyStrip(stripped);
      const warnings = stripped === trimmed ? [] : [CONTENT_MARKERS_STRIPPED];

      let outcome = applyOne(doc, op, target, content, spans, mode);
      let nextHits = hits;
      let nextSpans = spans;
      if (outcome.text !== doc) {
        nextHits = scanMarkers(outcome.text);
        nextSpans = spansFromHits(nextHits);
        if (protectedSignature(outcome.text, nextHits, nextSpans) !== signature) {
          outcome = { text: doc, status: 'skipped_protected_region' };
          nextHits = hits;
          nextSpans = spans;
          warnings.push(PROTECTED_REGION_GUARD);
        }
      }
      const broken =
        outcome.text !== doc && options.skillFile !== false ? frontMatterBreak(doc, outcome.text) : undefined;
      if (broken) {
        outcome = { text: doc, status: FRONT_MATTER_STATUS };
        nextHits = hits;
        nextSpans = spans;
      }
      doc = outcome.text;
      hits = nextHits;
      spans = nextSpans;

      const row: EditReportRow = {
        index,
        id,
        op,
        target: head(target, PREVIEW_CHARS),
        content_preview: head(content, PREVIEW_CHARS),
        status: outcome.status,
      };
      if (outcome.occurrences !== undefined) row.occurrences = outcome.occurrences;
      if (warnings.length > 0) row.warnings = warnings;
      if (broken) row.error = `not applied: ${broken}`;
      report.push(row);
    } catch (err) {
      report.push(errorRow(index, id, messageOf(err)));
    }
  });
  return { text: doc, report };
}
