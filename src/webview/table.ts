/**
 * The steps table under the charts. Every value, and above all the optimizer's edit text, goes
 * into the page through `textContent`: no string from the run is ever parsed as HTML.
 */
import type { TableRow } from './charts/tableModel';

export interface TableHooks {
  openStep(row: TableRow): void;
  select(key: string): void;
  toggleEdits(key: string, open: boolean): void;
}

/** An element with an optional class and text (set as text, never parsed). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function editsCell(row: TableRow, open: boolean, hooks: TableHooks): HTMLTableCellElement {
  const td = el('td', 'edits');
  if (row.edits.length === 0) {
    td.textContent = row.editsSummary;
    return td;
  }
  const details = el('details');
  details.append(el('summary', undefined, row.editsSummary));
  // The edit list is built when first opened: a long run's table stays small until someone looks.
  let built = false;
  const build = (): void => {
    if (built) return;
    built = true;
    const list = el('ul', 'edit-list');
    for (const e of row.edits) {
      const li = el('li', 'edit');
      const head = el('div', 'edit-head');
      const title = el('span', 'edit-title', e.title);
      title.title = e.terms;
      head.append(title, el('span', `fate fate-${e.fate}`, e.fateLabel));
      li.append(head);
      if (e.content) li.append(el('pre', 'edit-content', e.content));
      list.append(li);
    }
    details.append(list);
  };
  if (open) {
    build();
    details.open = true;
  }
  details.addEventListener('toggle', () => {
    if (details.open) build();
    hooks.toggleEdits(row.key, details.open);
  });
  td.append(details);
  return td;
}

export function renderTable(
  body: HTMLTableSectionElement,
  rows: readonly TableRow[],
  state: { selected?: string; open: ReadonlySet<string> },
  hooks: TableHooks,
): void {
  const fragment = document.createDocumentFragment();
  for (const row of rows) {
    const tr = el('tr', row.key === state.selected ? 'selected' : undefined);
    tr.dataset.key = row.key;
    const stepCell = el('td', 'step');
    if (row.canOpen) {
      const button = el('button', 'step-link', row.title);
      button.type = 'button';
      button.title = `Open the ${row.title.toLowerCase()} candidate in the diff view`;
      button.addEventListener('click', () => {
        hooks.select(row.key);
        hooks.openStep(row);
      });
      stepCell.append(button);
    } else {
      stepCell.textContent = row.title;
    }
    const verdict = el('td', 'verdict');
    verdict.append(el('span', `badge verdict-${row.verdictKind}`, row.verdict));
    if (row.human) verdict.append(el('span', 'badge human', row.human));
    if (row.regressions) {
      const broke = el('span', 'badge regressions', row.regressions);
      broke.title = row.regressionsDetail ?? '';
      // The ids matter more than the count: they are read out and shown on hover.
      broke.setAttribute('aria-label', row.regressionsDetail ?? row.regressions);
      verdict.append(broke);
    }
    const delta = el(
      'td',
      `num delta${row.deltaValue === undefined ? '' : row.deltaValue > 0 ? ' up' : row.deltaValue < 0 ? ' down' : ''}`,
      row.delta,
    );
    if (row.deltaDetail) delta.title = row.deltaDetail;
    tr.append(
      stepCell,
      verdict,
      el('td', 'num', row.score),
      delta,
      editsCell(row, state.open.has(row.key), hooks),
    );
    tr.addEventListener('click', (ev) => {
      // Clicks on the link and the disclosure triangle have their own meaning.
      if (ev.target instanceof HTMLElement && ev.target.closest('button, summary, details')) return;
      hooks.select(row.key);
    });
    fragment.append(tr);
  }
  body.replaceChildren(fragment);
}
