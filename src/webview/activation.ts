/**
 * The activation track's table in Gate History: per epoch, the description's gate with the
 * held-out and train trigger rates it was decided on and the description it proposed. Like the
 * steps table, every string from the run goes in through `textContent`.
 */
import type { ActivationRecord, TriggerRateRecord } from '../protocol/records';
import { actionLabel } from '../protocol/words';
import { verdictKind } from './charts/viewModel';
import { el } from './table';

const rate = (r: TriggerRateRecord | undefined): string =>
  r === undefined ? '–' : r.rate === null ? 'n/a' : r.rate.toFixed(3);

function rates(before: TriggerRateRecord, candidate: TriggerRateRecord | undefined): string {
  return candidate ? `${rate(before)} → ${rate(candidate)}` : rate(before);
}

/** What the rates leave out: errored runs, recall and false triggers of the candidate. */
function detail(a: ActivationRecord): string {
  const r = a.held_out_candidate ?? a.held_out_before;
  const parts: string[] = [];
  if (r.recall !== undefined) parts.push(`loads when it should ${r.recall.toFixed(2)}`);
  if (r.false_trigger_rate !== undefined) parts.push(`false triggers ${r.false_trigger_rate.toFixed(2)}`);
  const errored =
    a.held_out_before.errored +
    (a.held_out_candidate?.errored ?? 0) +
    a.train_before.errored +
    (a.train_candidate?.errored ?? 0);
  if (errored) parts.push(`${errored} errored run${errored === 1 ? '' : 's'} left out`);
  return parts.join(' · ');
}

/** The panel, created once; hidden while the run has no activation records. */
export function activationPanel(): { box: HTMLElement; body: HTMLTableSectionElement } {
  const box = el('section', 'panel wide activation');
  box.hidden = true;
  const table = el('table', 'triggers');
  const head = el('thead');
  const tr = el('tr');
  for (const [text, cls] of [
    ['Epoch', ''],
    ['Verdict', ''],
    ['Held-out trigger rate', 'num'],
    ['Train trigger rate', 'num'],
    ['Description', ''],
  ] as const) {
    const th = el('th', cls || undefined, text);
    th.scope = 'col';
    tr.append(th);
  }
  head.append(tr);
  const body = el('tbody');
  table.append(head, body);
  box.append(
    el('h2', undefined, 'Activation track (the description, gated on held-out trigger queries)'),
    table,
  );
  return { box, body };
}

export function renderActivation(
  panel: { box: HTMLElement; body: HTMLTableSectionElement },
  records: readonly ActivationRecord[] | undefined,
): void {
  panel.box.hidden = !records?.length;
  const fragment = document.createDocumentFragment();
  for (const a of records ?? []) {
    const tr = el('tr');
    const verdict = el('td', 'verdict');
    verdict.append(el('span', `badge verdict-${verdictKind(a.action)}`, actionLabel(a.action)));
    const why = detail(a);
    const held = el('td', 'num', rates(a.held_out_before, a.held_out_candidate));
    if (why) held.title = why;
    const text = el('td', 'edits');
    const proposed = a.candidate_description ?? a.description_after;
    text.append(el('div', 'description', proposed));
    if (a.reason) text.append(el('div', 'reason', a.reason));
    tr.append(
      el('td', 'step', `Epoch ${a.epoch}`),
      verdict,
      held,
      el('td', 'num', rates(a.train_before, a.train_candidate)),
      text,
    );
    fragment.append(tr);
  }
  panel.body.replaceChildren(fragment);
}
