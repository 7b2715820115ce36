/**
 * Simulated triggering, for the demo and loop tests only (every reply says it is simulated): the
 * simulated target opens a listed skill when a content word of the request appears in the
 * skill's description, as a crude stand-in for a model matching a request to a description; the
 * simulated optimizer adds the content words of missed requests to the description and drops
 * the words that made it load for requests it should not serve.
 */
import { LOAD_SKILL_TOOL } from '../../prompts/activation';
import type { BackendReply, ChatRequest } from '../types';

const tag = '[simulated optimizer]';
const STOP = new Set(
  'about after also been does each from have into just like make more most only over please should some such than that their them then there these they this what when where which while will with would your help need want could tell give show'.split(
    ' ',
  ),
);

/** The request's content words: lower case, four letters or more, a plural's `s` dropped. */
export function contentWords(text: string): string[] {
  const words = (text.toLowerCase().match(/[a-z]{4,}/g) ?? []).filter((w) => !STOP.has(w));
  return [...new Set(words.map((w) => (w.length > 4 && w.endsWith('s') ? w.slice(0, -1) : w)))];
}

/** The sim target's trigger decision: a load call when the description shares a content word. */
export function simTriggerReply(req: ChatRequest): BackendReply {
  const system = req.messages.find((m) => m.role === 'system')?.content ?? '';
  const user = req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
  const skill = /<skill>\s*<name>([^<]*)<\/name>\s*<description>([^<]*)<\/description>/.exec(system);
  const described = new Set(contentWords(skill?.[2] ?? ''));
  const match = skill ? contentWords(user).find((w) => described.has(w)) : undefined;
  const usage = { promptTokens: Math.ceil((system.length + user.length) / 4), completionTokens: 12 };
  if (skill && match)
    return {
      text: '',
      usage,
      model: 'sim-target',
      trace: { toolCalls: [{ name: LOAD_SKILL_TOOL, arguments: { name: skill[1] } }], simulated: true },
    };
  return { text: '[simulated target] I can answer this without a skill.', usage, model: 'sim-target' };
}

/** The sim optimizer's new description from the describe prompt's sections. */
export function simDescribe(user: string): { reasoning: string; description: string } {
  const section = (title: string): string[] => {
    const at = user.indexOf(`## ${title}`);
    if (at < 0) return [];
    const body = user.slice(at).split('\n## ')[0] ?? '';
    return [...body.matchAll(/^- "(.*)" \(loaded/gm)].map((m) => m[1] ?? '');
  };
  const current = /## Current description[^\n]*\n([^\n]*)/.exec(user)?.[1] ?? '';
  const max = Number(/at most (\d+) characters/.exec(user)?.[1] ?? 1024);
  const missed = section('Should have loaded, did not');
  const wrong = new Set(section('Loaded, should not have').flatMap(contentWords));
  const kept = current
    .split(/\s+/)
    .filter((w) => !wrong.has(contentWords(w)[0] ?? ''))
    .join(' ');
  const add = [...new Set(missed.flatMap(contentWords))].filter(
    (w) => !wrong.has(w) && !contentWords(kept).includes(w),
  );
  const description = (add.length ? `${kept} Use it for requests about ${add.join(', ')}.` : kept).slice(
    0,
    max,
  );
  return {
    reasoning: `${tag} Added the words of ${missed.length} missed request(s), dropped ${wrong.size} word(s) that triggered wrongly.`,
    description,
  };
}
