/**
 * "Select Copilot Model": choose which VS Code chat model the `vscode-lm` backend uses when a
 * config says `auto`, and ask for access now (a user action) rather than during a run.
 */
import * as vscode from 'vscode';
import { copilotModel, setCopilotModel } from '../config';
import type { Ctx } from '../ctx';
import { ensureLmAccess } from '../lm/lmBridge';
import { errorMessage } from '../log';

const justification =
  'SkillOpt sends your skill and training tasks to this model while it trains or evaluates a skill.';

export function selectorFor(model: vscode.LanguageModelChat): string {
  return `vendor=${model.vendor},id=${model.id}`;
}

/** Returns the stored selector, or undefined when nothing was chosen. */
export async function selectCopilotModel(ctx: Ctx, selectorArg?: unknown): Promise<string | undefined> {
  let selector = typeof selectorArg === 'string' && selectorArg.trim() ? selectorArg.trim() : undefined;
  if (!selector) {
    const models = await vscode.lm.selectChatModels();
    if (models.length === 0) {
      void vscode.window.showErrorMessage(
        'SkillOpt: VS Code has no chat models. Install GitHub Copilot Chat (or another model provider) and sign in, then try again.',
      );
      return undefined;
    }
    const current = copilotModel();
    const pick = await vscode.window.showQuickPick(
      models.map((m) => ({
        label: m.name,
        description: `${m.vendor}/${m.family}${selectorFor(m) === current ? ' · current' : ''}`,
        detail: `id ${m.id} · up to ${m.maxInputTokens} input tokens`,
        model: m,
      })),
      {
        title: 'SkillOpt: Select Copilot Model',
        placeHolder: 'Model for vscode-lm roles whose model is "auto"',
      },
    );
    if (!pick) return undefined;
    selector = selectorFor(pick.model);
  }
  try {
    const model = await ensureLmAccess(ctx, selector, justification);
    await setCopilotModel(selector);
    ctx.log.info(`[lm] model selected: ${model.name} (${selector})`);
    if (typeof selectorArg !== 'string') {
      void vscode.window.showInformationMessage(
        `SkillOpt will use ${model.name} for "auto" vscode-lm roles.`,
      );
    }
    return selector;
  } catch (err) {
    ctx.log.error(`[lm] selecting ${selector}: ${errorMessage(err)}`);
    void vscode.window.showErrorMessage(`SkillOpt: ${errorMessage(err)}`);
    return undefined;
  }
}
