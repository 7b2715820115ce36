/**
 * Engine half of the `vscode-lm` backend: chat calls served by a model the VS Code Language Model
 * API exposes (Copilot and others). The engine never imports `vscode`; the extension host
 * implements `LmBridge` and the engine forwards each call through it.
 *
 * Bridge contract (what the extension host must do):
 * - Selection: `vscode.lm.selectChatModels(params.modelSelector)`, first match. No match → reject
 *   with an error whose `code` is 'NotFound' (or a SkillOptError('config') naming the selector).
 * - Messages: `params.messages` hold only user and assistant turns (vscode.lm has no system role;
 *   system text is already folded into the first user message). Send them as
 *   `LanguageModelChatMessage.User` / `.Assistant`, with `params.justification` in the request
 *   options and `params.maxTokens`, when set, as a model option.
 * - Reply: concatenate the text stream; `model` is the chosen model's id. Report `usage` when it
 *   can be counted (`model.countTokens`); otherwise the engine estimates it.
 * - Cancellation: cancel a `CancellationTokenSource` when `signal` aborts and reject once the
 *   request has stopped; the engine turns that into SkillOptError('cancelled').
 * - Errors: rethrow `vscode.LanguageModelError` (or any error with a string `code`) unchanged, or
 *   throw a SkillOptError directly. The engine maps codes: 'NoPermissions' → 'llm' (the user
 *   declined access; not worth retrying), 'NotFound' → 'config', 'Blocked' (quota or rate limit)
 *   and anything unrecognised → 'llm' with `transient: true`, so the client may retry.
 */
import { cancelledError, SkillOptError, messageOf } from '../errors';
import type { BackendReply, ChatBackend, ChatMessage, ChatRequest, ModelRole } from './types';
import type { LmMessage, LmModelSelector, LmRequest, LmResponse } from '../../protocol/lm';
import type { TargetErrorKind } from '../../protocol/vocabulary';

export interface LmBridge {
  request(params: LmRequest, signal: AbortSignal): Promise<LmResponse>;
}

/** A SkillOptError('llm') that says whether another attempt may succeed (rate limits, quota). */
export type HintedError = SkillOptError & { transient: boolean };

export function llmError(
  problem: string,
  transient: boolean,
  fix: string,
  cause?: unknown,
  kind?: TargetErrorKind,
): HintedError {
  return Object.assign(
    new SkillOptError(
      'llm',
      problem,
      { fix },
      { ...(cause === undefined ? {} : { cause }), ...(kind ? { kind } : {}) },
    ),
    {
      transient,
    },
  );
}

/** The `transient` hint on an error, when one was given. */
export function transientHint(err: unknown): boolean | undefined {
  if (typeof err !== 'object' || err === null || !('transient' in err)) return undefined;
  const t = err.transient;
  return typeof t === 'boolean' ? t : undefined;
}

/**
 * The configured model name as a selector: '' or 'auto' → any model; `vendor/family`
 * (e.g. `copilot/gpt-4o`); `key=value` pairs separated by commas (`vendor=copilot,id=...`);
 * otherwise a family name.
 */
export function parseModelSelector(model: string): LmModelSelector {
  const m = model.trim();
  if (!m || m === 'auto') return {};
  if (m.includes('=')) {
    const selector: LmModelSelector = {};
    for (const part of m.split(',')) {
      const [rawKey, ...rest] = part.split('=');
      const key = (rawKey ?? '').trim();
      const value = rest.join('=').trim();
      if ((key === 'vendor' || key === 'family' || key === 'id') && value) selector[key] = value;
      else {
        throw new SkillOptError('config', `"${part.trim()}" is not a model selector entry`, {
          key: 'model',
          fix: 'use vendor=..., family=... or id=..., separated by commas',
        });
      }
    }
    return selector;
  }
  const slash = m.indexOf('/');
  if (slash > 0) return { vendor: m.slice(0, slash), family: m.slice(slash + 1) };
  return { family: m };
}

/** vscode.lm has no system role: system text goes in front of the first user message. */
export function foldSystem(messages: readonly ChatMessage[]): LmMessage[] {
  const system = messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content.trim())
    .filter(Boolean)
    .join('\n\n');
  const rest: LmMessage[] = messages
    .filter((m): m is ChatMessage & LmMessage => m.role !== 'system')
    .map((m) => ({ role: m.role, content: m.content }));
  if (!system) return rest;
  const first = rest.findIndex((m) => m.role === 'user');
  if (first < 0) return [{ role: 'user', content: system }, ...rest];
  rest[first] = { role: 'user', content: `${system}\n\n${rest[first].content}` };
  return rest;
}

function describeSelector(s: LmModelSelector): string {
  const parts = Object.entries(s).map(([k, v]) => `${k}=${String(v)}`);
  return parts.length ? parts.join(', ') : 'any model';
}

function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export interface VscodeLmOptions {
  /** Configured model name, parsed by parseModelSelector. */
  model: string;
  role?: ModelRole;
  justification?: string;
}

export class VscodeLmBackend implements ChatBackend {
  readonly provider = 'vscode-lm';
  readonly model: string;
  readonly cacheParams: Record<string, unknown>;
  private readonly selector: LmModelSelector;

  constructor(
    private readonly bridge: LmBridge,
    private readonly options: VscodeLmOptions,
  ) {
    this.selector = parseModelSelector(options.model);
    this.model = options.model.trim() || 'auto';
    this.cacheParams = { selector: this.selector };
  }

  async call(req: ChatRequest, signal: AbortSignal): Promise<BackendReply> {
    if (signal.aborted) throw cancelledError('The VS Code language model request');
    const role = this.options.role ?? req.role;
    const params: LmRequest = {
      modelSelector: { ...this.selector },
      messages: foldSystem(req.messages),
      ...(req.maxTokens !== undefined ? { maxTokens: req.maxTokens } : {}),
      justification:
        this.options.justification ??
        `SkillOpt uses this model as the ${role} while it trains a skill document (stage: ${req.stage}).`,
    };
    let response: LmResponse;
    try {
      response = await this.bridge.request(params, signal);
    } catch (err) {
      if (signal.aborted) throw cancelledError('The VS Code language model request');
      throw this.mapError(err, role);
    }
    if (signal.aborted) throw cancelledError('The VS Code language model request');
    const prompt = params.messages.map((m) => m.content).join('\n');
    return {
      text: response.text,
      usage: response.usage ?? {
        promptTokens: estimateTokens(prompt),
        completionTokens: estimateTokens(response.text),
      },
      model: response.model,
      ...(response.usage ? {} : { trace: { usageEstimated: true } }),
    };
  }

  private mapError(err: unknown, role: ModelRole): SkillOptError {
    if (err instanceof SkillOptError) return err;
    const code =
      typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string'
        ? (err as { code: string }).code
        : undefined;
    const message = messageOf(err);
    const selector = describeSelector(this.selector);
    if (code === 'NotFound') {
      return new SkillOptError(
        'config',
        `No VS Code language model matches ${selector}`,
        {
          key: `model.${role}`,
          fix: 'install or sign in to a chat model provider (e.g. GitHub Copilot), or change the model name',
        },
        // A cause the errored-item count names: "model not found", not "failed".
        { cause: err, kind: 'not_found' },
      );
    }
    if (code === 'NoPermissions') {
      return llmError(
        `SkillOpt may not use the VS Code language model (${selector}): ${message}`,
        false,
        'allow SkillOpt to use the model when VS Code asks (Accounts menu: Manage Language Model Access)',
        err,
        'auth',
      );
    }
    if (code === 'Blocked') {
      return llmError(
        `The VS Code language model (${selector}) refused the request, usually a rate limit or quota: ${message}`,
        true,
        'lower the concurrency limits, wait and resume, or use a model with a higher quota',
        err,
        'rate_limit',
      );
    }
    return llmError(
      `The VS Code language model request failed${code ? ` (${code})` : ''}: ${message}`,
      true,
      'check the model provider in VS Code (signed in, online) and resume the run',
      err,
    );
  }
}
