/** LiveMathematicianBench's per-seed choice order, bit-exact with the reference's loader. */
import { createHash } from 'node:crypto';
import { PyRandom } from './pyRandom';
import type { TaskItem } from './tasks';

const SHUFFLE_LABELS = ['A', 'B', 'C', 'D', 'E', 'F', 'G'];

/**
 * The item with its choices in the order the reference draws for `seed`: Python's
 * `Random(int(sha256(f"{seed}:{id}")[:16], 16)).shuffle(choices)`, labels re-assigned A, B, C… and
 * the expected label moved with its choice. Items without `shuffleChoices` come back unchanged.
 */
export function withShuffledChoices(item: TaskItem, seed: number): TaskItem {
  if (!item.shuffleChoices || !item.choices?.length) return item;
  const digest = createHash('sha256').update(`${seed}:${item.id}`, 'utf8').digest('hex');
  const order = new PyRandom(BigInt(`0x${digest.slice(0, 16)}`)).shuffle(item.choices.map((_, i) => i));
  const oldLabels = item.choiceLabels ?? item.choices.map((_, i) => SHUFFLE_LABELS[i]);
  const newLabel = new Map(order.map((from, to) => [oldLabels[from].toUpperCase(), SHUFFLE_LABELS[to]]));
  return {
    ...item,
    choices: order.map((i) => item.choices![i]),
    choiceLabels: order.map((_, i) => SHUFFLE_LABELS[i]),
    answers: item.answers.map((a) => newLabel.get(a.trim().toUpperCase()) ?? a),
  };
}
