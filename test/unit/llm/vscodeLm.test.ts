import assert from 'node:assert/strict';
import { SkillOptError } from '../../../src/engine/errors';
import { errorKind } from '../../../src/engine/llm/retry';
import type { ChatRequest } from '../../../src/engine/llm/types';
import {
  foldSystem,
  parseModelSelector,
  transientHint,
  VscodeLmBackend,
  type LmBridge,
} from '../../../src/engine/llm/vscodeLm';
import type { LmModelSelector, LmRequest, LmResponse } from '../../../src/protocol/lm';

interface MemoryModel {
  vendor: string;
  family: string;
  id: string;
  /** Reply text from the messages; may throw to simulate a provider error. */
  answer(req: LmRequest): string;
  countTokens?: boolean;
  /** Never answers; rejects when the signal aborts, as a cancelled vscode.lm request does. */
  hangs?: boolean;
}

class CodedError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** An in-memory LmBridge with the selection and cancellation behaviour the extension host provides. */
class MemoryBridge implements LmBridge {
  readonly requests: LmRequest[] = [];
  constructor(private readonly models: MemoryModel[]) {}

  request(params: LmRequest, signal: AbortSignal): Promise<LmResponse> {
    this.requests.push(params);
    const s: LmModelSelector = params.modelSelector;
    const model = this.models.find(
      (m) =>
        (s.vendor === undefined || s.vendor === m.vendor) &&
        (s.family === undefined || s.family === m.family) &&
        (s.id === undefined || s.id === m.id),
    );
    if (!model) return Promise.reject(new CodedError('NotFound', 'no model'));
    if (model.hangs) {
      return new Promise((_, reject) => {
        signal.addEventListener('abort', () => reject(new Error('Canceled')), { once: true });
      });
    }
    try {
      const text = model.answer(params);
      const words = (t: string): number => t.split(/\s+/).filter(Boolean).length;
      return Promise.resolve({
        text,
        model: model.id,
        ...(model.countTokens
          ? {
              usage: {
                promptTokens: params.messages.reduce((n, m) => n + words(m.content), 0),
                completionTokens: words(text),
              },
            }
          : {}),
      });
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
  }
}

const chat = (over: Partial<ChatRequest> = {}): ChatRequest => ({
  role: 'optimizer',
  stage: 'merge',
  messages: [
    { role: 'system', content: 'You merge patches.' },
    { role: 'user', content: 'Patches: A B' },
    { role: 'assistant', content: 'Not JSON.' },
    { role: 'user', content: 'Reply in JSON.' },
  ],
  maxTokens: 512,
  ...over,
});

const signal = new AbortController().signal;

describe('llm/vscodeLm helpers', () => {
  it('folds system text into the first user message', () => {
    assert.deepEqual(foldSystem(chat().messages), [
      { role: 'user', content: 'You merge patches.\n\nPatches: A B' },
      { role: 'assistant', content: 'Not JSON.' },
      { role: 'user', content: 'Reply in JSON.' },
    ]);
    assert.deepEqual(foldSystem([{ role: 'system', content: 'only system' }]), [
      { role: 'user', content: 'only system' },
    ]);
  });

  it('parses model selectors', () => {
    assert.deepEqual(parseModelSelector(''), {});
    assert.deepEqual(parseModelSelector('auto'), {});
    assert.deepEqual(parseModelSelector('gpt-4o'), { family: 'gpt-4o' });
    assert.deepEqual(parseModelSelector('copilot/claude-sonnet-4'), {
      vendor: 'copilot',
      family: 'claude-sonnet-4',
    });
    assert.deepEqual(parseModelSelector('vendor=copilot, id=copilot-gpt-4o'), {
      vendor: 'copilot',
      id: 'copilot-gpt-4o',
    });
    assert.throws(
      () => parseModelSelector('vendor=copilot,size=big'),
      (e: unknown) => SkillOptError.is(e, 'config'),
    );
  });
});

describe('llm/vscodeLm VscodeLmBackend', () => {
  const models: MemoryModel[] = [
    {
      vendor: 'copilot',
      family: 'gpt-4o',
      id: 'copilot-gpt-4o',
      answer: (r) => `echo ${r.messages.length}`,
      countTokens: true,
    },
    { vendor: 'copilot', family: 'mini', id: 'copilot-mini', answer: () => 'four words of text' },
    { vendor: 'other', family: 'slow', id: 'slow-1', answer: () => '', hangs: true },
    {
      vendor: 'other',
      family: 'limited',
      id: 'limited-1',
      answer: () => {
        throw new CodedError('Blocked', 'Rate limit exceeded');
      },
    },
    {
      vendor: 'other',
      family: 'denied',
      id: 'denied-1',
      answer: () => {
        throw new CodedError('NoPermissions', 'user said no');
      },
    },
    {
      vendor: 'other',
      family: 'broken',
      id: 'broken-1',
      answer: () => {
        throw new Error('stream closed');
      },
    },
    {
      vendor: 'other',
      family: 'typed',
      id: 'typed-1',
      answer: () => {
        throw new SkillOptError('llm', 'bridge said so');
      },
    },
  ];

  it('forwards the call with folded messages, token cap and justification', async () => {
    const bridge = new MemoryBridge(models);
    const b = new VscodeLmBackend(bridge, { model: 'copilot/gpt-4o', role: 'optimizer' });
    assert.equal(b.provider, 'vscode-lm');
    assert.equal(b.model, 'copilot/gpt-4o');
    assert.deepEqual(b.cacheParams, { selector: { vendor: 'copilot', family: 'gpt-4o' } });
    const reply = await b.call(chat(), signal);
    assert.deepEqual(reply, {
      text: 'echo 3',
      usage: { promptTokens: 11, completionTokens: 2 },
      model: 'copilot-gpt-4o',
    });
    assert.deepEqual(bridge.requests[0], {
      modelSelector: { vendor: 'copilot', family: 'gpt-4o' },
      messages: foldSystem(chat().messages),
      maxTokens: 512,
      justification:
        'SkillOpt uses this model as the optimizer while it trains a skill document (stage: merge).',
    });
  });

  it('estimates usage when the bridge reports none', async () => {
    const b = new VscodeLmBackend(new MemoryBridge(models), { model: 'mini' });
    const reply = await b.call(chat({ maxTokens: undefined, role: 'target', stage: 'rollout' }), signal);
    assert.equal(reply.text, 'four words of text');
    assert.equal(reply.model, 'copilot-mini');
    assert.deepEqual(reply.usage, { promptTokens: 15, completionTokens: 5 });
    assert.deepEqual(reply.trace, { usageEstimated: true });
  });

  it('maps a missing model to a config error', async () => {
    const b = new VscodeLmBackend(new MemoryBridge(models), { model: 'nope', role: 'target' });
    await assert.rejects(
      b.call(chat(), signal),
      (e: unknown) =>
        SkillOptError.is(e, 'config') &&
        e.problem === 'No VS Code language model matches family=nope' &&
        e.place.key === 'model.target' &&
        errorKind(e) === 'not_found',
    );
  });

  it('marks rate limits as transient and refusals as not', async () => {
    const bridge = new MemoryBridge(models);
    const errorOf = async (model: string): Promise<unknown> => {
      try {
        await new VscodeLmBackend(bridge, { model }).call(chat(), signal);
      } catch (e) {
        return e;
      }
      return assert.fail('expected an error');
    };
    const limited = await errorOf('limited');
    assert.ok(SkillOptError.is(limited, 'llm'));
    assert.equal(transientHint(limited), true);
    assert.match(limited.message, /rate limit or quota: Rate limit exceeded/);
    // Causes the errored-item counts name (not "failed").
    assert.equal(errorKind(limited), 'rate_limit');
    const denied = await errorOf('denied');
    assert.ok(SkillOptError.is(denied, 'llm'));
    assert.equal(transientHint(denied), false);
    assert.equal(errorKind(denied), 'auth');
    const broken = await errorOf('broken');
    assert.ok(SkillOptError.is(broken, 'llm'));
    assert.equal(broken.problem, 'The VS Code language model request failed: stream closed');
    assert.equal(transientHint(broken), true);
    const typed = await errorOf('typed');
    assert.ok(SkillOptError.is(typed, 'llm'));
    assert.equal(typed.problem, 'bridge said so');
    assert.equal(transientHint(typed), undefined);
  });

  it('turns an aborted request into a cancellation', async () => {
    const bridge = new MemoryBridge(models);
    const b = new VscodeLmBackend(bridge, { model: 'slow' });
    const controller = new AbortController();
    const pending = b.call(chat(), controller.signal);
    controller.abort();
    await assert.rejects(pending, (e: unknown) => SkillOptError.is(e, 'cancelled'));
    await assert.rejects(b.call(chat(), controller.signal), (e: unknown) => SkillOptError.is(e, 'cancelled'));
    assert.equal(bridge.requests.length, 1, 'an already-aborted call never reaches the bridge');
  });
});
