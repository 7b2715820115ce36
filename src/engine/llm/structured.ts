/**
 * Structured optimizer calls (reference §1.9, fixing §12 item 1): parse the reply tolerantly,
 * validate it against its contract, and when it is unusable ask once more, quoting what was wrong
 * and restating the shape. A reply that is still unusable comes back as `ok: false`; the caller
 * then applies the reference's fallback, and the fallback is recorded and logged here so it is
 * never silent.
 *
 * Transport failures (SkillOptError 'llm' after the client's retries, 'cancelled') are not reply
 * problems: they propagate untouched and are never re-asked.
 */
import type { z } from 'zod';
import type { Logger } from '../log';
import type { Contract } from './contracts/contract';
import { extractJson } from './json';
import type { ChatMessage, ChatRequest, ChatResult, ModelClient } from './types';

export interface FallbackRecorder {
  recordFallback(stage: string, reason: string): void;
  /** Counted in the report's reliability section (the Accounting has it). */
  recordReask?(stage: string): void;
}

export interface StructuredOptions {
  signal?: AbortSignal;
  accounting?: FallbackRecorder;
  logger?: Logger;
  /** Default true. False reproduces the reference (no second chance), e.g. for a parity run. */
  reask?: boolean;
}

export type StructuredOutcome<T> =
  | { ok: true; value: T; raw: string; reasked: boolean; result: ChatResult }
  | { ok: false; error: string; raw: string; reasked: boolean };

export type ParsedReply<T> = { ok: true; value: T } | { ok: false; error: string };

/** How many validation issues a re-ask quotes; the first few are what the model needs to fix. */
const MAX_ISSUES = 4;
const MAX_ERROR_CHARS = 600;

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || '(top level)';
}

export function formatIssues(error: z.ZodError): string {
  const issues = error.issues.slice(0, MAX_ISSUES).map((i) => `${formatPath(i.path)}: ${i.message}`);
  const more = error.issues.length - MAX_ISSUES;
  const text = issues.join('; ') + (more > 0 ? `; and ${more} more` : '');
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS - 1)}…` : text;
}

/** Tolerant extraction followed by schema validation; the error is short and human readable. */
export function parseReply<T>(contract: Contract<T>, text: string): ParsedReply<T> {
  const json = extractJson(text);
  if (!json.ok) return { ok: false, error: json.error };
  const checked = contract.schema.safeParse(json.value);
  if (!checked.success)
    return { ok: false, error: `does not match the expected shape: ${formatIssues(checked.error)}` };
  return { ok: true, value: checked.data };
}

export function reaskMessage(contract: Contract<unknown>, error: string): string {
  return [
    `That reply could not be used: ${error}.`,
    'Answer again with exactly one JSON object of the shape below, and nothing else around it:',
    contract.describe(),
  ].join('\n\n');
}

export async function structuredCall<T>(
  client: ModelClient,
  request: ChatRequest,
  contract: Contract<T>,
  options: StructuredOptions = {},
): Promise<StructuredOutcome<T>> {
  const log = (level: 'info' | 'warn', message: string): void =>
    options.logger?.log(level, 'llm', `${request.stage} (${contract.name}): ${message}`);

  const first = await client.chat(request, options.signal);
  const firstParse = parseReply(contract, first.text);
  if (firstParse.ok)
    return { ok: true, value: firstParse.value, raw: first.text, reasked: false, result: first };
  if (options.reask === false) return fallBack(firstParse.error, first.text, false);

  log('info', `reply unusable (${firstParse.error}); asking once more`);
  options.accounting?.recordReask?.(request.stage);
  const messages: ChatMessage[] = [
    ...request.messages,
    { role: 'assistant', content: first.text },
    { role: 'user', content: reaskMessage(contract, firstParse.error) },
  ];
  const second = await client.chat({ ...request, messages }, options.signal);
  const secondParse = parseReply(contract, second.text);
  if (secondParse.ok) {
    log('info', 'the second reply was usable');
    return { ok: true, value: secondParse.value, raw: second.text, reasked: true, result: second };
  }

  return fallBack(
    `after one re-ask: ${secondParse.error} (first reply: ${firstParse.error})`,
    second.text,
    true,
  );

  function fallBack(error: string, raw: string, reasked: boolean): StructuredOutcome<T> {
    log('warn', `falling back: ${error}`);
    options.accounting?.recordFallback(request.stage, error);
    return { ok: false, error, raw, reasked };
  }
}
