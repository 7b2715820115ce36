/**
 * The `vscode-lm` wire: one chat request the engine sends to the extension host, which serves it
 * with the VS Code Language Model API, and the answer. The contract each side keeps is described
 * in src/engine/llm/vscodeLm.ts.
 */
export interface LmModelSelector {
  vendor?: string;
  family?: string;
  id?: string;
}

export interface LmMessage {
  role: 'user' | 'assistant';
  content: string;
}

export interface LmRequest {
  modelSelector: LmModelSelector;
  messages: LmMessage[];
  maxTokens?: number;
  /** Shown by VS Code when it asks the user to allow SkillOpt to use the model. */
  justification: string;
}

export interface LmResponse {
  text: string;
  usage?: { promptTokens: number; completionTokens: number };
  /** Id of the model that answered. */
  model: string;
}
