/**
 * The simulated target's "habits": systematic mistakes it makes on some answers unless the skill
 * contains a rule that corrects them. The simulated optimizer diagnoses the same habits from
 * failed trajectories and proposes those rules. This is what makes a training run with the `sim`
 * backend improve for real (through the same loop, gate and files) without any model.
 */

export interface Habit {
  name: string;
  /** Does this habit affect an item with this gold answer and type? */
  applies(gold: string, taskType: string | undefined): boolean;
  /** The wrong answer the simulated target gives without the rule. */
  distort(gold: string): string;
  /** The skill contains a rule that corrects the habit. */
  corrected: RegExp;
  /** Rule texts the simulated optimizer proposes once it has diagnosed the habit. */
  rules: string[];
  /** Recognise this habit from a (predicted, expected) pair. */
  diagnose(predicted: string, expected: string): boolean;
}

const officialCapitals: Record<string, string> = {
  Canberra: 'Sydney',
  Ottawa: 'Toronto',
  Ankara: 'Istanbul',
  Brasília: 'São Paulo',
  Bern: 'Zurich',
  Abuja: 'Lagos',
  Rabat: 'Casablanca',
  Wellington: 'Auckland',
  Hanoi: 'Ho Chi Minh City',
  Islamabad: 'Karachi',
  'New Delhi': 'Mumbai',
  Pretoria: 'Johannesburg',
};
const largestCities = new Set(Object.values(officialCapitals));

/**
 * What the simulated target knows about capitals. It answers capital questions from this table, not
 * from the task's expected answer, so a task with a wrong expected answer (or an unknowable one)
 * fails under every skill: the report's persistent-failure list exists to surface exactly that.
 */
export const capitalOf: Record<string, string> = {
  Australia: 'Canberra',
  Canada: 'Ottawa',
  Turkey: 'Ankara',
  Brazil: 'Brasília',
  Switzerland: 'Bern',
  Nigeria: 'Abuja',
  Morocco: 'Rabat',
  'New Zealand': 'Wellington',
  Vietnam: 'Hanoi',
  Pakistan: 'Islamabad',
  India: 'New Delhi',
  'South Africa': 'Pretoria',
  Kenya: 'Nairobi',
};

const isoDate = /^(\d{4})-(\d{2})-(\d{2})$/;
const measurement = /^(\d+)\.(\d{2}) ([a-z]+)$/;

export const habits: Habit[] = [
  {
    name: 'unpadded-date',
    applies: (gold) => isoDate.test(gold) && /-0\d/.test(gold),
    distort: (gold) => gold.replace(/-0(\d)/g, '-$1'),
    corrected: /zero-?pad|two digits/i,
    rules: [
      '- Write dates as YYYY-MM-DD and zero-pad the month and day to two digits (2024-03-05, not 2024-3-5).',
    ],
    diagnose: (p, e) => isoDate.test(e) && !isoDate.test(p) && p === e.replace(/-0(\d)/g, '-$1'),
  },
  {
    name: 'missing-currency-symbol',
    applies: (gold) => /^\$\d/.test(gold),
    distort: (gold) => gold.slice(1),
    corrected: /currency symbol|dollar sign/i,
    rules: ['- Prefix money amounts with the currency symbol and give two decimals, e.g. $15.75.'],
    diagnose: (p, e) => e.startsWith('$') && p === e.slice(1),
  },
  {
    name: 'rounded-measurement',
    applies: (gold) => measurement.test(gold),
    distort: (gold) => {
      const m = measurement.exec(gold)!;
      return `${Math.round(Number(`${m[1]}.${m[2]}`))} ${m[3]}`;
    },
    corrected: /two decimal places/i,
    rules: [
      '- Give converted measurements with exactly two decimal places followed by the unit, e.g. 8.05 km.',
    ],
    diagnose: (p, e) => measurement.test(e) && /^\d+ [a-z]+$/.test(p),
  },
  {
    name: 'largest-city-for-capital',
    applies: (gold, type) => type === 'capital' && gold in officialCapitals,
    distort: (gold) => officialCapitals[gold] ?? gold,
    corrected: /official capital|seat of government/i,
    rules: [
      '- When asked for a capital, give the official capital (the seat of government), not the largest city.',
    ],
    diagnose: (p, e) => largestCities.has(p) && e in officialCapitals,
  },
  {
    name: 'given-name-first',
    applies: (gold) => /^[\p{L}-]+, [\p{L} ]+$/u.test(gold),
    distort: (gold) => {
      const [last, first] = gold.split(', ');
      return `${first} ${last}`;
    },
    corrected: /surname first|last name first/i,
    rules: ['- Write personal names surname first, then a comma and the given names: "Lovelace, Ada".'],
    diagnose: (p, e) => e.includes(', ') && p === e.split(', ').reverse().join(' '),
  },
  {
    // Catch-all so that any task set (not only the bundled example) gives the optimizer something to learn.
    name: 'trailing-period',
    applies: (gold, type) => type !== 'capital' && /[\p{L}\d]$/u.test(gold) && hash(gold) % 3 === 0,
    distort: (gold) => `${gold}.`,
    corrected: /no trailing (punctuation|period)|without a trailing period/i,
    rules: ['- Give the answer with no trailing punctuation: no final period.'],
    diagnose: (p, e) => p === `${e}.`,
  },
];

/** Rules the simulated optimizer sometimes proposes that hurt, so the gate has something to reject. */
export const harmfulRules = [
  {
    text: '- Round every number in the answer to the nearest whole number for readability.',
    effect: /round every number/i,
  },
];

/** Rules that change nothing for the simulated target: candidates that only add these tie and are rejected. */
export const neutralRules = [
  '- Re-read the question once before answering.',
  '- Keep the answer on a single line.',
];

/** Small deterministic string hash (FNV-1a), so the simulation never depends on Math.random. */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * Yield at least one macrotask (or wait `latencyMs`). The simulated models answer instantly; without
 * this a run whose replies all come from memory never lets Ctrl-C, a stop request or a timer in.
 */
export function nextTurn(latencyMs = 0): Promise<void> {
  return new Promise((resolve) => (latencyMs > 0 ? setTimeout(resolve, latencyMs) : setImmediate(resolve)));
}

/** One trajectory of the analyst prompt's material, as the simulated optimizer reads it back. */
export interface Trajectory {
  id: string;
  type: string;
  answer: string;
  expected: string;
}

/** The trajectories of a prompt section (`### Trajectory N (id=…)` blocks). */
export function parseTrajectories(section: string): Trajectory[] {
  const out: Trajectory[] = [];
  for (const block of section.split(/^### Trajectory \d+ /m).slice(1)) {
    const line = (key: string): string => new RegExp(`^${key}: (.*)$`, 'm').exec(block)?.[1]?.trim() ?? '';
    out.push({
      id: /^\(id=(.+?)\)/.exec(block)?.[1] ?? '',
      type: line('task_type'),
      answer: line('model answer'),
      expected: line('expected').split(' | ')[0] ?? '',
    });
  }
  return out;
}
