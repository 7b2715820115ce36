/**
 * Draws the view models with Chart.js. Colours come from the `--vscode-*` variables of the current
 * theme and are read again when the theme changes; nothing here decides what a value means.
 */
import type {
  ChartDataset,
  ChartOptions,
  LegendItem,
  Point as ChartPoint,
  TooltipItem,
} from 'chart.js' with { 'resolution-mode': 'import' };
import type * as ChartJs from 'chart.js' with { 'resolution-mode': 'import' };
import type { BudgetChartModel, Marker, ScoreChartModel, SpendChartModel } from './viewModel';

/** Chart.js ships as an ES module only; main.ts loads it with `import()` and hands it over. */
export type ChartLib = typeof ChartJs;

let lib: ChartLib | undefined;

export function useChartLib(chartjs: ChartLib): void {
  const c = chartjs;
  c.Chart.register(
    c.LineController,
    c.BarController,
    c.LineElement,
    c.BarElement,
    c.PointElement,
    c.LinearScale,
    c.Tooltip,
    c.Legend,
  );
  lib = chartjs;
}

export interface Palette {
  foreground: string;
  muted: string;
  grid: string;
  /** The paired gate's interval bars: they stand on the step grid lines, so never the grid's colour. */
  interval: string;
  blue: string;
  green: string;
  red: string;
  orange: string;
  purple: string;
  yellow: string;
  background: string;
  font: string;
  highContrast: boolean;
}

function cssVar(name: string, fallback: string): string {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

/**
 * The same colour without transparency. Some themes define chart colours with alpha (Default
 * Modern's charts.orange is 33% opaque), which turns thin lines and markers into a muddy tint.
 */
export function opaque(color: string): string {
  const rgba = /^rgba\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*[\d.]+\s*\)$/i.exec(color);
  if (rgba) return `rgb(${rgba[1]}, ${rgba[2]}, ${rgba[3]})`;
  if (/^#[0-9a-f]{8}$/i.test(color)) return color.slice(0, 7);
  if (/^#[0-9a-f]{4}$/i.test(color)) return color.slice(0, 4);
  return color;
}

function chartColor(name: string, fallback: string): string {
  return opaque(cssVar(name, fallback));
}

export function readPalette(): Palette {
  const foreground = cssVar('--vscode-foreground', cssVar('--vscode-editor-foreground', 'CanvasText'));
  const highContrast =
    document.body.classList.contains('vscode-high-contrast') ||
    document.body.classList.contains('vscode-high-contrast-light');
  return {
    foreground,
    muted: cssVar('--vscode-descriptionForeground', foreground),
    grid: cssVar('--vscode-charts-lines', cssVar('--vscode-widget-border', foreground)),
    // High contrast gives the grid and muted text both the foreground; cyan is no other series' colour.
    interval: chartColor('--vscode-terminal-ansiCyan', foreground),
    blue: chartColor('--vscode-charts-blue', foreground),
    green: chartColor('--vscode-charts-green', foreground),
    red: chartColor('--vscode-charts-red', foreground),
    orange: chartColor('--vscode-charts-orange', foreground),
    purple: chartColor('--vscode-charts-purple', foreground),
    yellow: chartColor('--vscode-charts-yellow', foreground),
    background: cssVar('--vscode-editor-background', 'Canvas'),
    font: cssVar('--vscode-font-family', 'sans-serif'),
    highContrast,
  };
}

type Hidden = ReadonlySet<string>;

export interface ChartHooks {
  /** A legend entry was switched on or off. */
  onToggle(label: string, hidden: boolean): void;
  /** A candidate marker was clicked. */
  onPick(key: string): void;
}

function baseOptions(p: Palette, hooks: ChartHooks): ChartOptions<'line'> & ChartOptions<'bar'> {
  return {
    responsive: true,
    maintainAspectRatio: false,
    animation: false,
    parsing: false,
    normalized: true,
    interaction: { mode: 'nearest', intersect: true },
    color: p.foreground,
    font: { family: p.font },
    plugins: {
      legend: {
        position: 'bottom',
        labels: {
          color: p.foreground,
          usePointStyle: true,
          boxWidth: 10,
          boxHeight: 10,
          font: { family: p.font },
          // A series with nothing to draw (no human decision yet, no step in flight) needs no key.
          filter: (item, data) => (data.datasets[item.datasetIndex ?? -1]?.data.length ?? 0) > 0,
        },
        onClick: (e, item: LegendItem, legend) => {
          lib?.Chart.defaults.plugins.legend.onClick.call(legend, e, item, legend);
          const index = item.datasetIndex ?? -1;
          hooks.onToggle(item.text, index >= 0 ? !legend.chart.isDatasetVisible(index) : false);
        },
      },
      tooltip: {
        backgroundColor: p.background,
        titleColor: p.foreground,
        bodyColor: p.foreground,
        borderColor: p.grid,
        borderWidth: 1,
        titleFont: { family: p.font },
        bodyFont: { family: p.font },
      },
    },
  };
}

function xAxis(p: Palette, maxStep: number): NonNullable<ChartOptions<'line'>['scales']>[string] {
  return {
    type: 'linear',
    min: 0,
    // Room right of the last step for its epoch-end markers (at +0.33 and +0.66).
    max: maxStep + 0.9,
    title: { display: true, text: 'step', color: p.muted },
    ticks: {
      color: p.muted,
      stepSize: 1,
      precision: 0,
      // Slow updates sit at half steps; only whole steps get a tick label.
      callback: (v) => (Number.isInteger(Number(v)) && Number(v) <= maxStep ? String(v) : ''),
    },
    grid: { color: p.grid, lineWidth: p.highContrast ? 1 : 0.5 },
  };
}

function yAxis(
  p: Palette,
  title: string,
  position: 'left' | 'right' = 'left',
): NonNullable<ChartOptions<'line'>['scales']>[string] {
  return {
    type: 'linear',
    position,
    title: { display: true, text: title, color: p.muted },
    ticks: { color: p.muted },
    grid: { color: p.grid, lineWidth: p.highContrast ? 1 : 0.5, drawOnChartArea: position === 'left' },
  };
}

/**
 * The data's range (interval ends included) with a margin beyond both ends, so no bar end or marker
 * lies on the chart's frame; the margin's own bounds get no tick label (only the round values do).
 */
function scoreAxis(p: Palette, range: { min: number; max: number }): ReturnType<typeof yAxis> {
  const margin = 0.04 * (range.max - range.min);
  return {
    ...yAxis(p, 'selection score'),
    min: range.min - margin,
    max: range.max + margin,
    ticks: { color: p.muted, includeBounds: false },
  };
}

type LineSet = ChartDataset<'line', ChartPoint[]>;

function markerSet(
  label: string,
  data: Marker[],
  color: string,
  style: LineSet['pointStyle'],
  radius: number,
  hidden: Hidden,
): LineSet {
  return {
    label,
    data,
    showLine: false,
    pointStyle: style,
    pointRadius: radius,
    pointHoverRadius: radius + 2,
    pointBorderWidth: 2,
    borderColor: color,
    backgroundColor: color,
    hidden: hidden.has(label),
  };
}

function markerOf(item: TooltipItem<'line'>): Marker | undefined {
  const raw = item.raw as Partial<Marker> | undefined;
  return raw && typeof raw.key === 'string' ? (raw as Marker) : undefined;
}

export function scoreConfig(
  m: ScoreChartModel,
  p: Palette,
  hidden: Hidden,
  hooks: ChartHooks,
): {
  datasets: LineSet[];
  options: ChartOptions<'line'>;
} {
  const datasets: LineSet[] = [
    {
      label: 'best',
      data: m.best,
      stepped: 'before',
      borderColor: p.green,
      backgroundColor: p.green,
      borderWidth: 2,
      pointRadius: 0,
      hidden: hidden.has('best'),
    },
    {
      label: 'current',
      data: m.current,
      stepped: 'before',
      borderColor: p.blue,
      backgroundColor: p.blue,
      borderWidth: 2,
      borderDash: [6, 3],
      pointRadius: 0,
      hidden: hidden.has('current'),
    },
    {
      label: 'train rollout',
      data: m.rollout,
      borderColor: p.yellow,
      backgroundColor: p.yellow,
      borderWidth: 1.5,
      borderDash: [2, 3],
      pointRadius: 2,
      hidden: hidden.has('train rollout'),
    },
    {
      label: 'gate interval (paired)',
      data: m.errorBars,
      borderColor: p.interval,
      backgroundColor: p.interval,
      borderWidth: 2,
      pointRadius: 0,
      // No points are drawn; the style is the legend's key: a vertical bar, as the intervals are.
      pointStyle: 'line',
      pointRotation: 90,
      spanGaps: false,
      hidden: hidden.has('gate interval (paired)'),
    },
    {
      label: 'no skill (target alone)',
      data: m.noSkill,
      borderColor: p.muted,
      backgroundColor: p.muted,
      borderWidth: 1.5,
      borderDash: [1, 4],
      pointRadius: 0,
      // The legend's key: a short dash, as the line is.
      pointStyle: 'dash',
      hidden: hidden.has('no skill (target alone)'),
    },
    markerSet('accepted', m.accepted, p.green, 'triangle', 6, hidden),
    markerSet('rejected', m.rejected, p.red, 'crossRot', 6, hidden),
    markerSet('inconclusive (within noise)', m.inconclusive, p.yellow, 'rect', 5, hidden),
    markerSet('epoch end (slow update, meta)', m.epochEnd, p.orange, 'star', 7, hidden),
    markerSet('gate running', m.pending, p.muted, 'circle', 4, hidden),
    {
      ...markerSet('your decision', m.human, p.purple, 'rectRot', 10, hidden),
      backgroundColor: 'transparent',
    },
  ];
  const options: ChartOptions<'line'> = {
    ...baseOptions(p, hooks),
    scales: {
      x: xAxis(p, m.maxStep),
      y: scoreAxis(p, m.yRange),
    },
    onClick: (_e, elements, chart) => {
      const hit = elements[0];
      if (!hit) return;
      const raw = chart.data.datasets[hit.datasetIndex]?.data[hit.index] as Partial<Marker> | undefined;
      if (raw && typeof raw.key === 'string') hooks.onPick(raw.key);
    },
  };
  const tooltip = options.plugins?.tooltip;
  if (tooltip) {
    tooltip.callbacks = {
      title: (items) => {
        const marker = items.map(markerOf).find((x) => x !== undefined);
        return marker ? marker.label : `step ${items[0]?.parsed.x ?? ''}`;
      },
      label: (item) => `${item.dataset.label ?? ''}: ${(item.parsed.y ?? 0).toFixed(3)}`,
    };
  }
  return { datasets, options };
}

export function budgetConfig(
  m: BudgetChartModel,
  p: Palette,
  hidden: Hidden,
  hooks: ChartHooks,
): {
  datasets: Array<ChartDataset<'bar', ChartPoint[]> | ChartDataset<'line', ChartPoint[]>>;
  options: ChartOptions<'bar'>;
} {
  const tokensLabel = m.estimatedTokens ? 'skill tokens (≈ chars/4)' : 'skill tokens';
  return {
    datasets: [
      {
        type: 'bar',
        label: 'edit budget',
        data: m.editBudget,
        yAxisID: 'y',
        backgroundColor: p.purple,
        borderColor: p.purple,
        borderWidth: p.highContrast ? 2 : 0,
        barThickness: 14,
        hidden: hidden.has('edit budget'),
      },
      {
        type: 'line',
        label: tokensLabel,
        data: m.skillTokens,
        yAxisID: 'y1',
        borderColor: p.blue,
        backgroundColor: p.blue,
        borderWidth: 2,
        pointRadius: 2,
        hidden: hidden.has(tokensLabel),
      },
    ],
    options: {
      ...baseOptions(p, hooks),
      scales: {
        x: xAxis(p, m.maxStep),
        // Headroom above the largest budget so its bar does not touch the frame.
        y: { ...yAxis(p, 'edits'), beginAtZero: true, grace: 1, ticks: { color: p.muted, precision: 0 } },
        y1: { ...yAxis(p, 'tokens', 'right'), beginAtZero: true },
      },
    },
  };
}

export function spendConfig(
  m: SpendChartModel,
  p: Palette,
  hidden: Hidden,
  hooks: ChartHooks,
): {
  datasets: LineSet[];
  options: ChartOptions<'line'>;
} {
  const label = m.unit === 'usd' ? 'spend (USD)' : 'tokens used';
  const options: ChartOptions<'line'> = {
    ...baseOptions(p, hooks),
    scales: {
      x: xAxis(p, m.maxStep),
      y: { ...yAxis(p, m.unit === 'usd' ? 'USD' : 'tokens'), beginAtZero: true },
    },
  };
  return {
    datasets: [
      {
        label,
        data: m.spend,
        borderColor: p.orange,
        backgroundColor: p.orange,
        borderWidth: 2,
        pointRadius: 2,
        hidden: hidden.has(label),
      },
    ],
    options,
  };
}
