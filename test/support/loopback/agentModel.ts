import { anthropicMessages, anthropicPromptText, startAnthropicServer } from './anthropicServer';
import type { Handler, LoopbackServer, RecordedRequest, Reply, Script, ToolCall } from './core';
import { openAiMessages, openAiPromptText, startOpenAiServer } from './openaiServer';
import { responsesInput, responsesPromptText, startResponsesServer } from './responsesServer';

/** The wire an agent CLI speaks: Claude Code, Codex and Copilot CLI (BYOK) respectively. */
export type AgentWire = 'anthropic' | 'responses' | 'chat';

/** A loopback server speaking `wire` (Messages, Responses or Chat Completions) with `script`. */
export function startWireServer(wire: AgentWire, script: Script): Promise<LoopbackServer> {
  const start =
    wire === 'anthropic'
      ? startAnthropicServer
      : wire === 'responses'
        ? startResponsesServer
        : startOpenAiServer;
  return start(script);
}

/**
 * A scripted model for agent CLIs, deciding from the request alone as a real model would from its
 * context. It answers `What is the capital of <country>?`:
 *  - when the skill's rule text is anywhere in what it was sent (system prompt, messages, tool
 *    results), it answers the way the rule says (`<answer>PARIS</answer>`);
 *  - otherwise, when the CLI lists a skill named `skillName` whose description matches `trigger`
 *    and no tool has run yet, it loads the skill the way that CLI offers (Claude Code's `Skill`
 *    tool, Copilot's `skill` tool, a `cat` of the SKILL.md for Codex);
 *  - otherwise it answers without the rule (`<answer>Paris</answer>`).
 * So a score rises only when the rule reaches the model, and a skill whose description does not
 * match is never read.
 */
export interface AgentModelOptions {
  wire: AgentWire;
  skillName: string;
  /** Text of the trained rule; its presence in the context changes the answer. */
  rule: string;
  /**
   * What a description must say for the model to load the skill; or a decision from the listed
   * description and the request's whole text (a model matching the user's request to it).
   */
  trigger: RegExp | ((description: string, text: string) => boolean);
  /**
   * A file beside SKILL.md (`references/rules.md`) that the loaded skill names: once the skill is in
   * the context and the rule is not, the model reads that file with the CLI's own file tool.
   */
  reference?: string;
  /**
   * Replaces the reply for a request (errors, hangs, a scripted usage on the normal reply, which
   * `normal` gives); undefined = normal behaviour.
   */
  override?: (req: RecordedRequest, normal: (req: RecordedRequest) => Reply) => Reply | undefined;
}

const CAPITALS: Record<string, string> = {
  France: 'Paris',
  Japan: 'Tokyo',
  Italy: 'Rome',
  Peru: 'Lima',
  Kenya: 'Nairobi',
  Norway: 'Oslo',
};

export function promptText(wire: AgentWire, req: RecordedRequest): string {
  switch (wire) {
    case 'anthropic':
      return anthropicPromptText(req);
    case 'responses':
      return responsesPromptText(req);
    case 'chat':
      return openAiPromptText(req);
  }
}

/** How many tool results this conversation holds. */
function toolResults(wire: AgentWire, req: RecordedRequest): number {
  switch (wire) {
    case 'anthropic':
      return anthropicMessages(req)
        .filter((m) => Array.isArray(m.content))
        .flatMap((m) => m.content as Array<{ type?: string }>)
        .filter((b) => b?.type === 'tool_result').length;
    case 'responses':
      return responsesInput(req).filter((i) => i.type === 'function_call_output').length;
    case 'chat':
      return openAiMessages(req).filter((m) => m.role === 'tool').length;
  }
}

/** Whether a tool already ran in this conversation (a tool result is in the request). */
function toolRan(wire: AgentWire, req: RecordedRequest): boolean {
  return toolResults(wire, req) > 0;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The description the CLI lists for `name`, in each CLI's listing format. */
export function listedDescription(text: string, name: string): string | undefined {
  const n = escape(name);
  // Copilot: <name>x</name>\n<description>…</description>
  const xml = new RegExp(`<name>${n}</name>\\s*<description>([^<]*)</description>`).exec(text);
  if (xml) return xml[1];
  // Claude Code and Codex: "- x: description" (Codex appends "(file: r1/x/SKILL.md)").
  const line = new RegExp(`^- ${n}: (.*)$`, 'm').exec(text);
  return line?.[1].replace(/ \(file: [^)]*\)$/, '');
}

/** Codex lists skills by a short path under a numbered root: `(file: r1/x/SKILL.md)` and "- `r1` = `/abs`". */
function codexSkillPath(text: string, name: string): string | undefined {
  const file = new RegExp(`^- ${escape(name)}: .*\\(file: (r\\d+)/([^)]+)\\)`, 'm').exec(text);
  if (!file) return undefined;
  const root = new RegExp(`^- \`${file[1]}\` = \`([^\`]+)\``, 'm').exec(text);
  return root ? `${root[1]}/${file[2]}` : undefined;
}

function loadCall(wire: AgentWire, text: string, name: string): ToolCall | undefined {
  switch (wire) {
    case 'anthropic':
      return { name: 'Skill', input: { skill: name } };
    case 'chat':
      return { name: 'skill', input: { skill: name } };
    case 'responses': {
      const path = codexSkillPath(text, name);
      return path ? { name: 'exec_command', input: { cmd: `cat '${path}'` } } : undefined;
    }
  }
}

export function agentModel(opts: AgentModelOptions): Handler {
  const normal = decide(opts);
  return (req) => opts.override?.(req, normal) ?? normal(req);
}

function decide(opts: AgentModelOptions): (req: RecordedRequest) => Reply {
  return (req) => {
    const text = promptText(opts.wire, req);
    const country = /capital of ([A-Z][a-z]+)/.exec(text)?.[1];
    const capital = (country && CAPITALS[country]) || 'unknown';
    if (text.includes(opts.rule)) {
      return { kind: 'reply', text: `The rule applies.\n<answer>${capital.toUpperCase()}</answer>` };
    }
    const read = opts.reference ? readReference(opts.wire, text, opts.skillName, opts.reference) : undefined;
    // The skill's load is the first tool result; the reference is read once, after it.
    if (read && toolResults(opts.wire, req) === 1) return { kind: 'reply', toolCalls: [read] };
    const description = listedDescription(text, opts.skillName);
    const matches =
      description !== undefined &&
      (typeof opts.trigger === 'function' ? opts.trigger(description, text) : opts.trigger.test(description));
    if (matches && !toolRan(opts.wire, req)) {
      const call = loadCall(opts.wire, text, opts.skillName);
      if (call) return { kind: 'reply', toolCalls: [call] };
    }
    return { kind: 'reply', text: `<answer>${capital}</answer>` };
  };
}

/**
 * The read of `reference` in the loaded skill's folder, when the skill's text (which names the file)
 * is in the context and the file's path can be told from it: Claude Code says "Base directory for
 * this skill: <dir>", Codex lists its skill roots, Copilot names the skill's SKILL.md path.
 */
function readReference(wire: AgentWire, text: string, name: string, reference: string): ToolCall | undefined {
  if (!text.includes(reference)) return undefined;
  const dir = new RegExp(`(/[^\\s'"\`<>]*/skills/${escape(name)})(?=[/\\s'"\`<>]|$)`).exec(text)?.[1];
  if (!dir) return undefined;
  const path = `${dir}/${reference}`;
  switch (wire) {
    case 'anthropic':
      return { name: 'Read', input: { file_path: path } };
    case 'chat':
      return { name: 'view', input: { path } };
    case 'responses':
      return { name: 'exec_command', input: { cmd: `cat '${path}'` } };
  }
}
