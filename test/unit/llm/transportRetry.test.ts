import Anthropic from '@anthropic-ai/sdk';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { SkillOptError } from '../../../src/engine/errors';
import {
  backoffMs,
  CallTimeoutError,
  describeError,
  isTransient,
  retryAfterMs,
  sleep,
} from '../../../src/engine/llm/retry';

function openAiStatus(
  status: number,
  headers: Record<string, string> = {},
  message = 'msg',
): InstanceType<typeof OpenAI.APIError> {
  return OpenAI.APIError.generate(status, { error: { message } }, undefined, new Headers(headers));
}

function anthropicStatus(
  status: number,
  headers: Record<string, string> = {},
): InstanceType<typeof Anthropic.APIError> {
  return Anthropic.APIError.generate(
    status,
    { type: 'error', error: { type: 'x', message: 'nested' } },
    undefined,
    new Headers(headers),
  );
}

function withCode(code: string): Error {
  const inner = Object.assign(new Error('socket'), { code });
  return new TypeError('fetch failed', { cause: inner });
}

describe('llm/retry', () => {
  it('classifies errors as transient or not', () => {
    const cases: Array<[string, unknown, boolean]> = [
      ['openai 408', openAiStatus(408), true],
      ['openai 409', openAiStatus(409), true],
      ['openai 429', openAiStatus(429), true],
      ['openai 500', openAiStatus(500), true],
      ['openai 503', openAiStatus(503), true],
      ['openai 400', openAiStatus(400), false],
      ['openai 401', openAiStatus(401), false],
      ['openai 403', openAiStatus(403), false],
      ['openai 404', openAiStatus(404), false],
      ['openai 422', openAiStatus(422), false],
      ['openai connection', new OpenAI.APIConnectionError({ message: 'Connection error.' }), true],
      ['openai timeout', new OpenAI.APIConnectionTimeoutError(), true],
      ['openai user abort', new OpenAI.APIUserAbortError(), false],
      ['anthropic 529', anthropicStatus(529), true],
      ['anthropic 429', anthropicStatus(429), true],
      ['anthropic 400', anthropicStatus(400), false],
      ['anthropic connection', new Anthropic.APIConnectionError({ message: 'Connection error.' }), true],
      ['anthropic timeout', new Anthropic.APIConnectionTimeoutError(), true],
      ['anthropic user abort', new Anthropic.APIUserAbortError(), false],
      ['our timeout', new CallTimeoutError(1000), true],
      ['truncated body', new SyntaxError('Unexpected end of JSON input'), true],
      ['socket closed mid-body', new TypeError('terminated'), true],
      ['reset', withCode('ECONNRESET'), true],
      ['undici socket', withCode('UND_ERR_SOCKET'), true],
      ['reply validation', new SkillOptError('llm-reply', 'empty'), false],
      ['config', new SkillOptError('config', 'no key'), false],
      ['programming error', new TypeError('x is not a function'), false],
      ['string', 'boom', false],
    ];
    for (const [label, err, expected] of cases) assert.equal(isTransient(err), expected, label);
  });

  it('backs off exponentially with full jitter, up to the cap', () => {
    const half = Array.from({ length: 8 }, (_, i) => backoffMs(i + 1, { random: () => 0.5 }));
    assert.deepEqual(half, [250, 500, 1000, 2000, 4000, 8000, 15000, 15000]);
    assert.equal(backoffMs(3, { random: () => 0 }), 0);
    assert.equal(backoffMs(3, { random: () => 0.999, baseMs: 100, capMs: 250 }), 249);
    for (let i = 0; i < 50; i++) {
      const ms = backoffMs(4);
      assert.ok(ms >= 0 && ms < 4000);
    }
  });

  it('reads retry-after-ms and retry-after (seconds or HTTP date), capped', () => {
    const now = Date.parse('Wed, 21 Oct 2026 07:28:00 GMT');
    const at = (h: Record<string, string>, cap?: number): number | undefined =>
      retryAfterMs(openAiStatus(429, h), cap, () => now);
    assert.equal(at({ 'retry-after-ms': '1500' }), 1500);
    assert.equal(at({ 'retry-after-ms': '1500', 'retry-after': '9' }), 1500);
    assert.equal(at({ 'retry-after-ms': 'soon', 'retry-after': '9' }), 9000);
    assert.equal(at({ 'retry-after': '2' }), 2000);
    assert.equal(at({ 'retry-after': '0.25' }), 250);
    assert.equal(at({ 'retry-after': 'Wed, 21 Oct 2026 07:28:05 GMT' }), 5000);
    assert.equal(at({ 'retry-after': 'Wed, 21 Oct 2026 07:27:00 GMT' }), 0);
    assert.equal(at({ 'retry-after': '3600' }), 60_000);
    assert.equal(at({ 'retry-after': '3600' }, 5000), 5000);
    assert.equal(at({ 'retry-after': 'later' }), undefined);
    assert.equal(at({}), undefined);
    assert.equal(retryAfterMs(anthropicStatus(529, { 'retry-after': '4' })), 4000);
    assert.equal(retryAfterMs(new Error('no headers')), undefined);
  });

  it('describes failures in one line', () => {
    assert.equal(describeError(openAiStatus(429, {}, 'Rate limit\n reached')), '429 Rate limit reached');
    assert.equal(describeError(anthropicStatus(500)), '500 nested');
    assert.equal(describeError(new CallTimeoutError(1500)), 'no reply within 1.5 s');
    assert.equal(describeError(new CallTimeoutError(30_000)), 'no reply within 30 s');
    assert.equal(describeError(new CallTimeoutError(250)), 'no reply within 250 ms');
    assert.equal(describeError(new OpenAI.APIConnectionTimeoutError()), 'request timed out');
    assert.equal(
      describeError(new OpenAI.APIConnectionError({ message: 'x', cause: withCode('ECONNREFUSED') })),
      'connection failed (ECONNREFUSED)',
    );
    assert.equal(describeError(new TypeError('terminated')), 'connection closed mid-reply');
    assert.equal(
      describeError(new SyntaxError('Unexpected end of JSON input')),
      'malformed reply body (Unexpected end of JSON input)',
    );
    assert.equal(describeError('x'.repeat(300)).length, 240);
  });

  it('sleeps abortably', async () => {
    await sleep(0);
    await sleep(5);
    const controller = new AbortController();
    const pending = sleep(60_000, controller.signal);
    controller.abort();
    await assert.rejects(pending, (err: unknown) => SkillOptError.is(err, 'cancelled'));
    await assert.rejects(sleep(10, AbortSignal.abort()), (err: unknown) =>
      SkillOptError.is(err, 'cancelled'),
    );
  });
});
