/** The hover over a line a review put in the document: what the edit is and where it stands. */
import * as vscode from 'vscode';
import { candidateName } from '../../protocol/webview';
import type { TrackedSession } from './registry';
import type { OwnerState, Segment } from './session';

export function firstLine(text: string | undefined, max = 70): string {
  const line = (text ?? '').split('\n').find((l) => l.trim()) ?? '';
  const t = line.trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** Optimizer text is untrusted: it goes in as plain text or a code block, never as Markdown. */
export function hoverText(t: TrackedSession, o: OwnerState, seg: Segment): vscode.MarkdownString {
  const s = t.session;
  const md = new vscode.MarkdownString(undefined, true);
  md.isTrusted = false;
  md.supportHtml = false;
  md.appendMarkdown(`**SkillOpt ${candidateName(s.init.origin, s.init.step, s.init.epoch)}** · `);
  md.appendText(seg.kind === 'added' ? 'proposed text' : 'text the edit removes');
  md.appendMarkdown('\n\n');
  const e = o.edit;
  const rows: Array<[string, string]> = [];
  if (e) {
    rows.push(['op', e.op]);
    if (e.support_count !== undefined) rows.push(['support_count', String(e.support_count)]);
    if (e.source_type)
      rows.push([
        'source',
        e.source_type === 'failure'
          ? 'failed tasks'
          : e.source_type === 'success'
            ? 'successful tasks'
            : e.source_type,
      ]);
    if (e.status) rows.push(['apply status', e.status]);
    rows.push(['edit id', e.id]);
    for (const other of e.conflicts_with ?? []) {
      const o2 = s.owners.get(other)?.edit;
      rows.push([
        'conflicts with',
        o2 ? `${o2.op} ${other}: ${firstLine(o2.content ?? o2.target, 200)} (keep one of the two)` : other,
      ]);
    }
  } else {
    rows.push([
      'change',
      s.init.origin === 'slow_update' ? 'epoch-end slow update' : 'not traced to one edit',
    ]);
  }
  const fate =
    o.fate === 'pending'
      ? 'waiting for your decision'
      : `${o.fate}${o.decidedBy ? ` by ${o.decidedBy === 'gate' ? 'the gate' : 'you'}` : ''}`;
  rows.push(['state', fate]);
  for (const [k, v] of rows) {
    md.appendMarkdown(`- ${k}: `);
    md.appendText(v);
    md.appendMarkdown('\n');
  }
  if (e?.target && e.op !== 'append') {
    md.appendMarkdown('\n**Target:** ');
    md.appendText(e.target);
  }
  return md;
}
