/**
 * The resume line after a stop on a spend cap. Caps count the whole run (every session, through the
 * ledger), so the usual resume command, under the same cap, would stop again at once: the line
 * names the cap to raise and carries a placeholder for its new value instead of the old one.
 */
import type { StopCap } from '../protocol/events';
import { capUsedText } from '../protocol/words';
import type { CommonArgs } from './commands/common';

/** `MORE_THAN_26126`: not a number, so a line pasted unchanged is refused by the config check, not run. */
export function capPlaceholder(cap: StopCap): string {
  return `MORE_THAN_${capUsedText(cap)}`;
}

/** One sentence for the stop message: which cap to raise, above what, and where the new value goes. */
export function capAdvice(cap: StopCap): string {
  return `The cap counts the whole run, so resuming stops again at once unless ${cap.key} is raised above ${capUsedText(cap)}: put the new cap in place of ${capPlaceholder(cap)}`;
}

/**
 * The command's arguments without what set the cap (an override, or a legacy flag such as
 * `--max_tokens 20000`, which the loader applies after the overrides), and the override that sets
 * it to the placeholder, to add after the user's.
 */
export function raisingCap(a: CommonArgs, cap: StopCap): { args: CommonArgs; added: string[] } {
  const leaf = cap.key.slice(cap.key.indexOf('.') + 1);
  const names = new Set([cap.key, leaf]);
  const setsCap = (word: string): boolean => names.has(word.replace(/^--/, '').split('=')[0] ?? '');
  const legacyArgs: string[] = [];
  for (let i = 0; i < a.legacyArgs.length; i++) {
    const word = a.legacyArgs[i];
    if (word.startsWith('--') && setsCap(word)) {
      if (!word.includes('=')) i++;
      continue;
    }
    legacyArgs.push(word);
  }
  return {
    args: { ...a, legacyArgs, overrides: a.overrides.filter((o) => !setsCap(o)) },
    added: [`${cap.key}=${capPlaceholder(cap)}`],
  };
}
