/**
 * The reference benchmarks' records as their own loaders read them, turned into the fields our task
 * reader knows (tasks.ts). Each mapper follows the reference's dataset loader for that benchmark:
 * which column wins, how lists are written, which items it drops.
 */
import { pyStrip } from '../scoring/normalize';
import { normalizeLabel } from '../scoring/valueScorers';
import { parsePyLiteral, pyStr } from './pyLiteral';
import { isRecord } from './taskFiles';

export type TaskRecord = Record<string, unknown>;

/** Python's `str(row.get(k) or "")` over the first of `keys` that is truthy. */
function firstText(rec: TaskRecord, ...keys: string[]): string {
  for (const k of keys) {
    const v = rec[k];
    if (v === undefined || v === null || v === '' || v === false || v === 0) continue;
    return plain(v);
  }
  return '';
}

/** A cell as text: strings as they are, numbers and booleans printed, anything else as JSON. */
function plain(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v) ?? '';
}

/** DocVQA's answer cell: a Python list literal (`['a', 'b']`), another literal, or plain text. */
export function parseDocVqaAnswers(raw: unknown): string[] {
  if (Array.isArray(raw)) return raw.map((v) => pyStrip(plain(v))).filter((s) => s !== '');
  const text = pyStrip(raw == null ? '' : plain(raw));
  if (text === '') return [];
  const value = parsePyLiteral(text);
  if (value === undefined) return [text];
  if (value.t === 'list') return value.items.map((v) => pyStrip(pyStr(v))).filter((s) => s !== '');
  return [pyStrip(pyStr(value))];
}

/** A DocVQA row (reference `docvqa/dataloader.py`): the image path may trail the question as `document_path: …`. */
export function docVqaRecord(rec: TaskRecord): TaskRecord {
  const question = firstText(rec, 'question');
  const at = question.indexOf('document_path:');
  const [text, documentPath] =
    at < 0 ? [pyStrip(question), ''] : [pyStrip(question.slice(0, at)), pyStrip(question.slice(at + 14))];
  const answerCell =
    rec.answers !== undefined && Array.isArray(rec.answers)
      ? rec.answers
      : firstText(rec, 'answer', 'ground_truth');
  const imagePath = pyStrip(firstText(rec, 'image_path') || documentPath);
  return {
    id: pyStrip(firstText(rec, 'questionId', 'id')),
    question: text,
    answers: parseDocVqaAnswers(answerCell),
    task_type: pyStrip(firstText(rec, 'topic', 'category', 'task_type')) || 'docvqa',
    ...(imagePath ? { image_path: imagePath } : {}),
  };
}

/** OfficeQA's list cells: a JSON list, lines, or comma-separated names. */
export function officeQaList(value: unknown): string[] {
  if (Array.isArray(value)) return value.map((v) => pyStrip(String(v))).filter((s) => s !== '');
  const text = pyStrip(typeof value === 'string' ? value : '');
  if (text === '') return [];
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed)) return parsed.map((v) => pyStrip(String(v))).filter((s) => s !== '');
  } catch {
    // not JSON: lines or commas below
  }
  if (text.includes('\n'))
    return text
      .split('\n')
      .map(pyStrip)
      .filter((s) => s !== '');
  if (text.includes(',') && !text.toLowerCase().endsWith('.txt')) {
    return text
      .split(',')
      .map(pyStrip)
      .filter((s) => s !== '');
  }
  return [text];
}

/** An OfficeQA row (reference `officeqa/dataloader.py`): `ground_truth` before `answer`, `difficulty` as the type. */
export function officeQaRecord(rec: TaskRecord): TaskRecord {
  const id = pyStrip(firstText(rec, 'uid', 'id'));
  const truth = pyStrip(firstText(rec, 'ground_truth', 'answer'));
  return {
    id,
    question: pyStrip(firstText(rec, 'question')),
    answers: truth ? [truth] : [],
    task_type: pyStrip(firstText(rec, 'category', 'difficulty')) || 'officeqa',
    source_files: officeQaList(rec.source_files),
    source_docs: officeQaList(rec.source_docs),
  };
}

export interface LiveMathChoice {
  label: string;
  text: string;
}

const CHOICE_LABELS = ['A', 'B', 'C', 'D', 'E', 'F', 'G'];

function liveMathChoices(raw: unknown): LiveMathChoice[] {
  if (Array.isArray(raw)) {
    const out: LiveMathChoice[] = [];
    raw.forEach((item: unknown, idx) => {
      const label = isRecord(item)
        ? pyStrip(firstText(item, 'label') || (CHOICE_LABELS[idx] ?? ''))
        : (CHOICE_LABELS[idx] ?? '');
      const text = isRecord(item) ? pyStrip(firstText(item, 'text', 'content')) : pyStrip(String(item));
      if (text) out.push({ label, text });
    });
    return out;
  }
  if (isRecord(raw)) {
    return Object.keys(raw)
      .sort()
      .map((label) => ({ label: pyStrip(label), text: pyStrip(textOf(raw[label])) }))
      .filter((c) => c.text !== '');
  }
  return [];
}

function textOf(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  return plain(v);
}

/**
 * A LiveMathematicianBench item, from a monthly file (`mcq: {question, choices, correct_choice}`)
 * or a split file (the same fields at the top level), as the reference's `_normalize_item` reads it.
 * Undefined when the reference drops it (no question, no choices or no correct label).
 */
export function liveMathItem(rec: TaskRecord, rowIdx: number): TaskRecord | undefined {
  const mcq = isRecord(rec.mcq) ? rec.mcq : {};
  const question = pyStrip(firstText(mcq, 'question') || firstText(rec, 'question'));
  const choices = liveMathChoices(truthy(mcq.choices) ? mcq.choices : truthy(rec.choices) ? rec.choices : []);
  const correct = truthy(mcq.correct_choice)
    ? mcq.correct_choice
    : truthy(rec.correct_choice)
      ? rec.correct_choice
      : {};
  let label: string;
  let text = '';
  if (isRecord(correct)) {
    label = normalizeLabel(firstText(correct, 'label'));
    text = pyStrip(firstText(correct, 'text'));
  } else label = normalizeLabel(textOf(correct));
  const byLabel = new Map(choices.map((c) => [normalizeLabel(c.label), c.text]));
  if (label && !text) text = byLabel.get(label) ?? '';
  if (label && text && !byLabel.has(label)) {
    choices.push({ label, text });
    const rank = (c: LiveMathChoice): number => {
      const i = CHOICE_LABELS.indexOf(c.label);
      return i < 0 ? CHOICE_LABELS.length : i;
    };
    // Python's sort is stable, as is Array.prototype.sort.
    choices.sort((a, b) => rank(a) - rank(b));
  }
  if (!question || choices.length === 0 || !label) return undefined;
  const month = pyStrip(firstText(rec, 'month'));
  const no = rec.no ?? rowIdx + 1;
  const noText = typeof no === 'number' || typeof no === 'string' ? String(no) : JSON.stringify(no);
  const theoremType = Array.isArray(rec.theorem_type)
    ? rec.theorem_type.map((x) => pyStrip(String(x))).filter((s) => s !== '')
    : rec.theorem_type == null || pyStrip(textOf(rec.theorem_type)) === ''
      ? []
      : [pyStrip(textOf(rec.theorem_type))];
  return {
    id: month ? `${month}:${noText}` : noText,
    month,
    no,
    paper_link: pyStrip(firstText(rec, 'paper_link')),
    theorem: pyStrip(firstText(rec, 'theorem')),
    sketch: pyStrip(firstText(rec, 'sketch')),
    theorem_type: theoremType,
    question,
    choices,
    correct_choice: { label, text },
  };
}

function truthy(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === false || v === 0) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isRecord(v)) return Object.keys(v).length > 0;
  return true;
}
