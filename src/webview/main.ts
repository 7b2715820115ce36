/**
 * Gate History page: says `ready`, then draws whatever run data the host posts (again on every
 * update of a live run). Only the run id, the selected row and hidden series are kept in
 * `setState`; the data always comes fresh from the host.
 */
import type { Chart, ChartConfiguration } from 'chart.js' with { 'resolution-mode': 'import' };
import { isHostMessage, type GateHistoryData, type GateHistoryState } from '../protocol/webview';
import {
  budgetConfig,
  readPalette,
  scoreConfig,
  spendConfig,
  useChartLib,
  type ChartHooks,
  type ChartLib,
} from './charts/render';
import { gateLines, summaryLine, tableRows } from './charts/tableModel';
import { budgetChart, scoreChart, spendChart } from './charts/viewModel';
import { getHost } from './host';
import { activationPanel, renderActivation } from './activation';
import { renderTable } from './table';

const host = getHost();
let state: GateHistoryState | undefined = host.getState();
let data: GateHistoryData | undefined;
const openRows = new Set<string>();
const charts: { score?: Chart; budget?: Chart; spend?: Chart } = {};
let chartLib: ChartLib | undefined;

interface Layout {
  title: HTMLElement;
  summary: HTMLElement;
  /** The power check, the A/A check and the target alone (gateLines). */
  gate: HTMLElement;
  notice: HTMLElement;
  score: HTMLCanvasElement;
  budget: HTMLCanvasElement;
  spend: HTMLCanvasElement;
  body: HTMLTableSectionElement;
  activation: ReturnType<typeof activationPanel>;
}
let layout: Layout | undefined;

function saveState(patch: Partial<GateHistoryState>): void {
  if (!data && !state) return;
  state = { ...(state ?? { runId: data?.runId ?? '' }), ...patch };
  host.setState(state);
}

function section(parent: HTMLElement, heading: string, className: string, label: string): HTMLCanvasElement {
  const box = document.createElement('section');
  box.className = `panel ${className}`;
  const h = document.createElement('h2');
  h.textContent = heading;
  const wrap = document.createElement('div');
  wrap.className = 'chart';
  const canvas = document.createElement('canvas');
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', label);
  wrap.append(canvas);
  box.append(h, wrap);
  parent.append(box);
  return canvas;
}

function buildLayout(root: HTMLElement): Layout {
  root.replaceChildren();
  const header = document.createElement('header');
  const title = document.createElement('h1');
  const summary = document.createElement('p');
  summary.className = 'summary';
  const notice = document.createElement('p');
  notice.className = 'notice';
  notice.hidden = true;
  const gate = document.createElement('div');
  gate.className = 'gate-lines';
  header.append(title, summary, gate, notice);
  const grid = document.createElement('div');
  grid.className = 'grid';
  const score = section(
    grid,
    'Selection score per step',
    'wide',
    'Selection score of each candidate, the current and the best skill',
  );
  const budget = section(
    grid,
    'Edit budget and skill size',
    'half',
    'Edit budget per step and skill length in tokens',
  );
  const spend = section(grid, 'Spend', 'half', 'Running spend over the steps');
  const tableBox = document.createElement('section');
  tableBox.className = 'panel wide';
  const h = document.createElement('h2');
  h.textContent = 'Steps';
  const table = document.createElement('table');
  table.className = 'steps';
  const head = document.createElement('thead');
  const tr = document.createElement('tr');
  for (const [text, cls] of [
    ['Step', ''],
    ['Verdict', ''],
    ['Score', 'num'],
    ['Δ vs current', 'num'],
    ['Edits and their fate', ''],
  ]) {
    const th = document.createElement('th');
    th.textContent = text ?? '';
    if (cls) th.className = cls;
    th.scope = 'col';
    tr.append(th);
  }
  head.append(tr);
  const body = document.createElement('tbody');
  table.append(head, body);
  tableBox.append(h, table);
  const activation = activationPanel();
  grid.append(tableBox, activation.box);
  root.append(header, grid);
  return { title, summary, gate, notice, score, budget, spend, body, activation };
}

const hooks: ChartHooks = {
  onToggle: (label, hidden) => {
    const set = new Set(state?.hidden ?? []);
    if (hidden) set.add(label);
    else set.delete(label);
    saveState({ hidden: [...set] });
  },
  onPick: (key) => select(key, true),
};

function select(key: string, scroll: boolean): void {
  saveState({ selected: key });
  if (!layout) return;
  layout.body.querySelectorAll('tr').forEach((tr) => tr.classList.toggle('selected', tr.dataset.key === key));
  if (scroll)
    layout.body.querySelector(`tr[data-key="${CSS.escape(key)}"]`)?.scrollIntoView({ block: 'nearest' });
}

function upsert(
  slot: 'score' | 'budget' | 'spend',
  canvas: HTMLCanvasElement,
  config: ChartConfiguration,
): void {
  const existing = charts[slot];
  if (existing) {
    existing.data.datasets = config.data.datasets;
    existing.options = config.options ?? {};
    existing.update('none');
    return;
  }
  if (chartLib) charts[slot] = new chartLib.Chart(canvas, config);
}

function drawCharts(d: GateHistoryData): void {
  if (!layout) return;
  const palette = readPalette();
  const hidden = new Set(state?.hidden ?? []);
  const score = scoreConfig(scoreChart(d), palette, hidden, hooks);
  upsert('score', layout.score, {
    type: 'line',
    data: { datasets: score.datasets },
    options: score.options,
  });
  const budget = budgetConfig(budgetChart(d), palette, hidden, hooks);
  upsert('budget', layout.budget, {
    type: 'bar',
    data: { datasets: budget.datasets },
    options: budget.options,
  });
  const spend = spendConfig(spendChart(d), palette, hidden, hooks);
  upsert('spend', layout.spend, {
    type: 'line',
    data: { datasets: spend.datasets },
    options: spend.options,
  });
}

function render(d: GateHistoryData): void {
  const root = document.getElementById('app');
  if (!root) return;
  layout ??= buildLayout(root);
  layout.title.textContent = `Gate History: ${d.runName}`;
  layout.summary.textContent = `${d.status} · ${summaryLine(d)}`;
  layout.gate.replaceChildren(
    ...gateLines(d).map((line) => {
      const p = document.createElement('p');
      p.className = 'gate-line';
      p.textContent = line;
      return p;
    }),
  );
  layout.notice.hidden = !d.simulated;
  layout.notice.textContent = d.simulated
    ? 'Simulated models (sim backend): the scores show the loop working, not a real model.'
    : '';
  drawCharts(d);
  renderActivation(layout.activation, d.activation);
  renderTable(
    layout.body,
    tableRows(d),
    { ...(state?.selected ? { selected: state.selected } : {}), open: openRows },
    {
      openStep: (row) => host.post({ type: 'openStep', runId: d.runId, step: row.step, origin: row.origin }),
      select: (key) => select(key, false),
      toggleEdits: (key, open) => {
        if (open) openRows.add(key);
        else openRows.delete(key);
      },
    },
  );
}

function showMissing(message: string): void {
  const root = document.getElementById('app');
  if (!root) return;
  layout = undefined;
  for (const c of Object.values(charts)) c?.destroy();
  delete charts.score;
  delete charts.budget;
  delete charts.spend;
  const p = document.createElement('p');
  p.className = 'notice';
  p.textContent = message;
  root.replaceChildren(p);
}

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const message = event.data;
  if (!isHostMessage(message)) return;
  if (message.type === 'missing') {
    showMissing(message.message);
    return;
  }
  data = message.data;
  if (state?.runId !== data.runId) state = { runId: data.runId };
  host.setState(state);
  render(data);
});

// Theme switches change the --vscode-* variables; charts read colours when drawn.
new MutationObserver(() => {
  if (data) drawCharts(data);
}).observe(document.body, { attributes: true, attributeFilter: ['class'] });

void import('chart.js').then((chartjs) => {
  chartLib = chartjs;
  useChartLib(chartjs);
  host.post({ type: 'ready', ...(state?.runId ? { runId: state.runId } : {}) });
});
