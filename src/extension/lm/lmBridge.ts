/**
 * Host half of the `vscode-lm` backend: the engine asks (`lm/request`), the host answers with a
 * model from `vscode.lm`. The Language Model API has no system role, so the engine has already
 * folded system text into the first user message (src/engine/llm/vscodeLm.ts); here the turns go
 * out as User/Assistant messages. Failures come back with a typed reason the engine understands:
 * `llm` (no model, no consent: retrying will not help), `llm-transient` (quota, rate limit,
 * anything unknown), `cancelled`.
 */
import * as vscode from 'vscode';
import { parseModelSelector } from '../../engine/llm/vscodeLm';
import type { LmModelSelector, LmRequest, LmResponse } from '../../protocol/lm';
import { copilotModel } from '../config';
import { Commands } from '../constants';
import { errorMessage } from '../log';

export class LmBridgeError extends Error {
  constructor(
    message: string,
    readonly reason: 'llm' | 'llm-transient' | 'cancelled' | 'config',
  ) {
    super(message);
    this.name = 'LmBridgeError';
  }
}

export interface LmHost {
  readonly log: vscode.LogOutputChannel;
  readonly extension: vscode.ExtensionContext;
}

export function describeSelector(s: LmModelSelector): string {
  const parts = Object.entries(s)
    .filter(([, v]) => typeof v === 'string' && v)
    .map(([k, v]) => `${k}=${String(v)}`);
  return parts.length ? parts.join(', ') : 'any model';
}

/** The selector to use: the engine's, or (for `auto`) the model picked in "Select Copilot Model". */
export function effectiveSelector(requested: LmModelSelector): LmModelSelector {
  if (Object.values(requested).some((v) => typeof v === 'string' && v)) return requested;
  const picked = copilotModel();
  if (!picked) return {};
  try {
    return parseModelSelector(picked);
  } catch {
    return {};
  }
}

/** Notifications about the same problem at most once a minute: a run fails many calls at once. */
const shownAt = new Map<string, number>();
function notifyOnce(key: string, message: string): void {
  const now = Date.now();
  if ((shownAt.get(key) ?? 0) > now - 60_000) return;
  shownAt.set(key, now);
  void vscode.window.showErrorMessage(message, 'Select Copilot Model').then((choice) => {
    if (choice) void vscode.commands.executeCommand(Commands.selectCopilotModel);
  });
}

export async function selectModel(selector: LmModelSelector): Promise<vscode.LanguageModelChat> {
  const models = await vscode.lm.selectChatModels(selector);
  const model = models[0];
  if (!model) {
    const what = describeSelector(selector);
    throw new LmBridgeError(
      `No VS Code language model matches ${what}. Fix: install and sign in to GitHub Copilot (or another model provider), or pick a model with "SkillOpt: Select Copilot Model"`,
      'llm',
    );
  }
  return model;
}

function toMessages(params: LmRequest): vscode.LanguageModelChatMessage[] {
  return params.messages.map((m) =>
    m.role === 'assistant'
      ? vscode.LanguageModelChatMessage.Assistant(m.content)
      : vscode.LanguageModelChatMessage.User(m.content),
  );
}

function mapError(err: unknown, model: vscode.LanguageModelChat): LmBridgeError {
  if (err instanceof LmBridgeError) return err;
  const code = err instanceof vscode.LanguageModelError ? err.code : undefined;
  const name = `${model.name} (${model.vendor}/${model.family})`;
  if (code === vscode.LanguageModelError.NoPermissions.name) {
    return new LmBridgeError(
      `SkillOpt may not use ${name}: access was not granted. Fix: run "SkillOpt: Select Copilot Model" and allow access when VS Code asks, or allow it under Accounts → Manage Language Model Access`,
      'llm',
    );
  }
  if (code === vscode.LanguageModelError.NotFound.name) {
    return new LmBridgeError(
      `The language model ${name} is no longer available: ${errorMessage(err)}`,
      'llm',
    );
  }
  if (code === vscode.LanguageModelError.Blocked.name) {
    return new LmBridgeError(
      `${name} refused the request, usually a quota or rate limit: ${errorMessage(err)}. Fix: wait and resume the run, lower limits.target_concurrency, or pick another model`,
      'llm-transient',
    );
  }
  return new LmBridgeError(`${name} failed: ${errorMessage(err)}`, 'llm-transient');
}

/** Answers one `lm/request` from the engine. */
export async function serveLmRequest(
  host: LmHost,
  params: LmRequest,
  signal: AbortSignal,
): Promise<LmResponse> {
  const selector = effectiveSelector(params.modelSelector);
  let model: vscode.LanguageModelChat;
  try {
    model = await selectModel(selector);
  } catch (err) {
    const e = err instanceof LmBridgeError ? err : new LmBridgeError(errorMessage(err), 'llm-transient');
    host.log.error(`[lm] ${e.message}`);
    notifyOnce('no-model', `SkillOpt: ${e.message}`);
    throw e;
  }
  if (host.extension.languageModelAccessInformation.canSendRequest(model) === false) {
    const denied = new LmBridgeError(
      `SkillOpt may not use ${model.name}: access is turned off. Fix: allow it under Accounts → Manage Language Model Access`,
      'llm',
    );
    host.log.error(`[lm] ${denied.message}`);
    notifyOnce('no-access', `SkillOpt: ${denied.message}`);
    throw denied;
  }
  const cts = new vscode.CancellationTokenSource();
  const onAbort = (): void => cts.cancel();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const messages = toMessages(params);
    const response = await model.sendRequest(
      messages,
      {
        justification: params.justification,
        ...(params.maxTokens !== undefined ? { modelOptions: { maxTokens: params.maxTokens } } : {}),
      },
      cts.token,
    );
    let text = '';
    for await (const chunk of response.text) text += chunk;
    if (signal.aborted) throw new LmBridgeError('The language model request was cancelled', 'cancelled');
    const usage = await countUsage(model, messages, text, cts.token);
    host.log.trace(`[lm] ${model.id}: ${text.length} characters`);
    return { text, model: model.id, ...(usage ? { usage } : {}) };
  } catch (err) {
    if (signal.aborted) throw new LmBridgeError('The language model request was cancelled', 'cancelled');
    const e = mapError(err, model);
    host.log.error(`[lm] ${e.message}`);
    if (e.reason === 'llm') notifyOnce(`denied:${model.id}`, `SkillOpt: ${e.message}`);
    throw e;
  } finally {
    signal.removeEventListener('abort', onAbort);
    cts.dispose();
  }
}

/** Token counts from the model when it can count them; the engine estimates otherwise. */
async function countUsage(
  model: vscode.LanguageModelChat,
  messages: vscode.LanguageModelChatMessage[],
  text: string,
  token: vscode.CancellationToken,
): Promise<{ promptTokens: number; completionTokens: number } | undefined> {
  try {
    let promptTokens = 0;
    for (const m of messages) promptTokens += await model.countTokens(m, token);
    const completionTokens = await model.countTokens(text, token);
    return { promptTokens, completionTokens };
  } catch {
    return undefined;
  }
}

/**
 * Called from a user action (a command) before a run that uses `vscode-lm`: finds the model and,
 * when VS Code has not asked yet, sends one tiny request so the consent prompt appears now, while
 * the person is looking, rather than failing calls in the background later.
 */
export async function ensureLmAccess(
  host: LmHost,
  modelSetting: string,
  justification: string,
): Promise<vscode.LanguageModelChat> {
  let selector: LmModelSelector;
  try {
    selector = effectiveSelector(parseModelSelector(modelSetting));
  } catch (err) {
    throw new LmBridgeError(errorMessage(err), 'config');
  }
  const model = await selectModel(selector);
  const allowed = host.extension.languageModelAccessInformation.canSendRequest(model);
  if (allowed === true) return model;
  if (allowed === false) {
    throw new LmBridgeError(
      `SkillOpt may not use ${model.name}: access is turned off. Fix: allow it under Accounts → Manage Language Model Access`,
      'llm',
    );
  }
  const cts = new vscode.CancellationTokenSource();
  try {
    const response = await model.sendRequest(
      [vscode.LanguageModelChatMessage.User('Reply with OK.')],
      { justification },
      cts.token,
    );
    for await (const _chunk of response.text) {
      // Drain the reply: the request only exists to ask for consent.
    }
    return model;
  } catch (err) {
    throw mapError(err, model);
  } finally {
    cts.dispose();
  }
}
