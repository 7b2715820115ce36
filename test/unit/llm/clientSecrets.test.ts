import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';
import { Accounting } from '../../../src/engine/llm/accounting';
import { AnthropicBackend } from '../../../src/engine/llm/anthropic';
import { ResponseCache } from '../../../src/engine/llm/cache';
import { createModelClient } from '../../../src/engine/llm/client';
import { OpenAiBackend } from '../../../src/engine/llm/openai';
import { redactSecrets, SecretRegistry } from '../../../src/engine/llm/secrets';
import type { ChatRequest } from '../../../src/engine/llm/types';
import type { Logger } from '../../../src/engine/log';
import {
  reply as anthropicReply,
  startAnthropicServer,
  status as anthropicStatus,
} from '../../support/loopback/anthropicServer';
import type { LoopbackServer } from '../../support/loopback/openaiServer';
import { reply, startOpenAiServer, status } from '../../support/loopback/openaiServer';

const KEY = 'fake-LEAKCHECK-9f8e7d6c5b4a3210';
const EXTRA = 'tok-EXTRA-SECRET-77aa';

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

describe('llm/secrets redaction', () => {
  it('replaces every occurrence, longest secret first, and ignores short values', () => {
    assert.equal(
      redactSecrets('a fake-abcdefgh b fake-abcdefgh-long c', ['fake-abcdefgh', 'fake-abcdefgh-long']),
      'a [redacted] b [redacted] c',
    );
    assert.equal(redactSecrets('the key none was used', ['none']), 'the key none was used');
    const reg = new SecretRegistry([KEY, undefined, '']);
    assert.equal(reg.size, 1);
    assert.deepEqual(reg.redactValue({ a: [`x${KEY}y`, 3], [KEY]: null }), {
      a: ['x[redacted]y', 3],
      '[redacted]': null,
    });
    const lines: string[] = [];
    reg.wrapLogger({ log: (_l, _c, m) => lines.push(m) }).log('info', 't', `key=${KEY}`);
    assert.deepEqual(lines, ['key=[redacted]']);
  });

  it('refuses a key with a line break inside before any call, and redacts each of its lines', () => {
    const broken = `${KEY}\nX-K: ${EXTRA}`;
    for (const make of [
      () => new OpenAiBackend({ model: 'gpt-4o', apiKey: broken, baseUrl: 'http://127.0.0.1:9/v1' }),
      () =>
        new AnthropicBackend({ model: 'claude-haiku-4-5', apiKey: broken, baseUrl: 'http://127.0.0.1:9' }),
    ]) {
      assert.throws(make, (err: unknown) => {
        assert.ok(SkillOptError.is(err, 'config'), String(err));
        assert.match(
          err.message,
          /has a space, line break or control character inside it\. Fix: set it again/,
        );
        assert.ok(!err.message.includes(KEY.slice(5)), 'the message shows the key');
        return true;
      });
    }
    // A line break after the key (read from a file) is no part of it.
    assert.doesNotThrow(() => new OpenAiBackend({ model: 'gpt-4o', apiKey: `${KEY}\r\n` }));
    const reg = new SecretRegistry([broken]);
    assert.equal(reg.redact(`Bearer ${broken.replace('\n', ' ')}`), 'Bearer [redacted] X-K: [redacted]');
  });

  describe('through the client', () => {
    let servers: LoopbackServer[] = [];
    let dir = '';
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'skillopt-secrets-'));
    });
    afterEach(async () => {
      await Promise.all(servers.map((s) => s.close()));
      servers = [];
      rmSync(dir, { recursive: true, force: true });
    });

    it('keeps the key out of logs, errors, accounting and cache files while really sending it', async () => {
      const openai = await startOpenAiServer([
        // A server that echoes the key back, in an error and in a reply.
        status(500, `Internal error for key ${KEY}`),
        reply(`You said ${KEY} and ${EXTRA}`),
        status(401, `Incorrect API key provided: ${KEY}`),
        status(503, `overloaded (${KEY})`),
        status(503, `overloaded (${KEY})`),
      ]);
      const anthropic = await startAnthropicServer([
        anthropicStatus(529, `busy ${KEY}`),
        anthropicReply(`echo ${KEY}`),
      ]);
      servers = [openai, anthropic];
      const lines: string[] = [];
      const logger: Logger = {
        log: (level, component, message) => lines.push(`${level} ${component} ${message}`),
      };
      const accounting = new Accounting({ logger });
      const cache = new ResponseCache(join(dir, 'cache'), { logger });
      const errors: string[] = [];
      const results: string[] = [];
      const common = {
        accounting,
        cache,
        cachePolicy: { allRoles: true },
        logger,
        secrets: [EXTRA],
        retry: { maxAttempts: 2, random: () => 0 },
        sleep: () => Promise.resolve(),
      };
      const req: ChatRequest = {
        role: 'target',
        stage: 'rollout',
        messages: [{ role: 'user', content: 'hi' }],
        temperature: 0,
      };
      const oa = createModelClient({
        ...common,
        role: 'target',
        backend: new OpenAiBackend({ model: 'gpt-4o', apiKey: KEY, baseUrl: openai.url }),
      });
      const an = createModelClient({
        ...common,
        role: 'target',
        backend: new AnthropicBackend({ model: 'claude-haiku-4-5', apiKey: KEY, baseUrl: anthropic.url }),
      });
      const capture = async (p: Promise<{ text: string }>): Promise<void> => {
        try {
          results.push(JSON.stringify(await p));
        } catch (err) {
          assert.ok(err instanceof SkillOptError);
          errors.push(err.message, err.problem, String(err.place.fix), String(err.stack));
        }
      };
      await capture(oa.chat(req)); // 500 then success
      await capture(oa.chat({ ...req, messages: [{ role: 'user', content: 'again' }] })); // 401
      await capture(oa.chat({ ...req, messages: [{ role: 'user', content: 'third' }] })); // 503 ×2, exhausted
      await capture(an.chat(req)); // 529 then success
      await capture(oa.chat(req)); // cache hit

      assert.equal(errors.length, 8, 'two calls failed');
      assert.equal(results.length, 3);
      assert.match(
        errors[0],
        /^openai_compatible gpt-4o: 401 Incorrect API key provided: \[redacted\] after 1 attempt/,
      );
      assert.match(errors[4], /^openai_compatible gpt-4o: 503 overloaded \(\[redacted\]\) after 2 attempts/);
      assert.match(results[0], /You said \[redacted\] and \[redacted\]/);
      assert.ok(
        lines.some((l) => l.includes('[redacted]')),
        'the echoed key was logged, redacted',
      );

      const haystacks = {
        logs: lines.join('\n'),
        errors: errors.join('\n'),
        results: results.join('\n'),
        accounting: JSON.stringify([accounting.snapshot(), accounting.recentFallbacks()]),
        cacheFiles: filesUnder(join(dir, 'cache'))
          .map((f) => readFileSync(f, 'utf8'))
          .join('\n'),
      };
      assert.ok(haystacks.cacheFiles.length > 0, 'cache files were written');
      for (const [where, text] of Object.entries(haystacks)) {
        assert.ok(!text.includes(KEY), `the key leaked into ${where}`);
        assert.ok(!text.includes(EXTRA), `the extra secret leaked into ${where}`);
      }

      // The key was really used on the wire.
      assert.ok(openai.requests.length >= 5);
      for (const r of openai.requests) assert.equal(r.headers.authorization, `Bearer ${KEY}`);
      for (const r of anthropic.requests) {
        const auth = r.headers['x-api-key'] ?? r.headers.authorization;
        assert.ok(auth === KEY || auth === `Bearer ${KEY}`);
      }
    });
  });
});
