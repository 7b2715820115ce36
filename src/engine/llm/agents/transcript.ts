/**
 * What an agent CLI did, read from its machine-readable output: Claude Code's `stream-json`,
 * Codex's `exec --json` and Copilot CLI's `--output-format json` (all JSON Lines), or plain text
 * for a custom command.
 */

import type { TargetErrorKind } from '../../../protocol/vocabulary';

export type AgentFormat = 'claude' | 'codex' | 'copilot' | 'text';

/** Why a run produced no answer: the target error kinds (TARGET_ERROR_KINDS) an agent run can end in. */
export type AgentErrorKind = Extract<TargetErrorKind, 'not_installed' | 'auth' | 'api' | 'crash' | 'timeout'>;

export interface AgentToolCall {
  name: string;
  /** A short rendering of the call's input (command line, path, skill name). */
  detail?: string;
}

export interface AgentUsage {
  inputTokens: number;
  outputTokens: number;
  /** Prompt tokens served from the provider's cache (included in `inputTokens`). */
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface AgentTranscript {
  /** The final answer text; undefined when the run ended without one. */
  answer?: string;
  /** Whether the agent opened the trained skill (its tool, or a read of its SKILL.md). */
  skillLoaded: boolean;
  /** Skills the CLI reported as available, when it reports them. */
  skillsAvailable?: string[];
  toolCalls: AgentToolCall[];
  /** Model turns (requests) as the CLI counts them, or as counted from its events. */
  turns: number;
  /** Tokens as the CLI reports them; undefined when it reports none (Copilot CLI). */
  usage?: AgentUsage;
  /** Dollars as the CLI reports them (Claude Code only). */
  costUsd?: number;
  /**
   * Whether the CLI priced every model it used from a list price it knows (Claude Code's
   * `modelUsage[*].costBasis: "list"`); for a model it does not know its figure is a guess.
   */
  costAtListPrices?: boolean;
  /** The model the CLI says it ran. */
  model?: string;
  /** An error the CLI reported (API error, auth failure); the run has no usable answer. */
  error?: { kind: AgentErrorKind; message: string; status?: number; transient: boolean };
  /** The CLI's final event arrived (a run cut short has none). */
  completed: boolean;
}

type Json = Record<string, unknown>;

function lines(stdout: string): Json[] {
  const out: Json[] = [];
  for (const line of stdout.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    try {
      const v: unknown = JSON.parse(t);
      if (v && typeof v === 'object' && !Array.isArray(v)) out.push(v as Json);
    } catch {
      // A line cut by the output bound, or not JSON: skip it.
    }
  }
  return out;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});

function short(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Whether a path or command line names the trained skill's SKILL.md. */
function mentionsSkillFile(text: string, skillName: string): boolean {
  return text.replace(/\\/g, '/').includes(`/${skillName}/SKILL.md`);
}

/** HTTP status → error kind; 408/409/429/5xx (and 529 overloaded) are worth another run. */
export function statusKind(status: number | undefined, message: string): AgentTranscript['error'] & object {
  const auth =
    status === 401 ||
    status === 403 ||
    /\b(401|403)\b|unauthori[sz]ed|authentication|invalid (x-)?api[ -]key|not logged in|please run \/login|log ?in required/i.test(
      message,
    );
  if (auth) return { kind: 'auth', message, ...(status !== undefined ? { status } : {}), transient: false };
  const transient =
    status === undefined
      ? /\b(429|5\d\d)\b|overloaded|rate limit|high demand|temporar|ECONNRESET|ECONNREFUSED|connection (error|refused|reset|failed)|could not connect|socket hang up|network/i.test(
          message,
        )
      : status === 408 || status === 409 || status === 429 || status >= 500;
  return { kind: 'api', message, ...(status !== undefined ? { status } : {}), transient };
}

function statusIn(message: string): number | undefined {
  const m = /\b(?:HTTP |status(?: code)?:? |API Error: )?([45]\d\d)\b/.exec(message);
  return m ? Number(m[1]) : undefined;
}

/** Claude Code `-p --output-format stream-json --verbose`. */
export function parseClaude(stdout: string, skillName: string): AgentTranscript {
  const t: AgentTranscript = { skillLoaded: false, toolCalls: [], turns: 0, completed: false };
  let lastText: string | undefined;
  // Usage of each model reply as streamed (one reply can arrive as several events), for a run cut
  // short before its `result` event: the output counts there are the stream's first figures.
  const replies = new Map<string, AgentUsage>();
  for (const e of lines(stdout)) {
    if (e.type === 'system' && e.subtype === 'init') {
      t.model = str(e.model) ?? t.model;
      if (Array.isArray(e.skills))
        t.skillsAvailable = e.skills.filter((s): s is string => typeof s === 'string');
    } else if (e.type === 'assistant') {
      const message = obj(e.message);
      if (typeof message.id === 'string' && message.usage)
        replies.set(message.id, anthropicUsage(message.usage));
      for (const block of Array.isArray(message.content) ? (message.content as unknown[]) : []) {
        const b = obj(block);
        if (b.type === 'text' && typeof b.text === 'string' && e.parent_tool_use_id == null)
          lastText = b.text;
        if (b.type !== 'tool_use') continue;
        const name = str(b.name) ?? '?';
        const input = obj(b.input);
        const detail = str(input.skill) ?? str(input.file_path) ?? str(input.command) ?? str(input.pattern);
        t.toolCalls.push({ name, ...(detail ? { detail: short(detail) } : {}) });
        if (name === 'Skill' && (input.skill === skillName || str(input.skill)?.endsWith(`:${skillName}`))) {
          t.skillLoaded = true;
        }
        if (detail && mentionsSkillFile(detail, skillName)) t.skillLoaded = true;
      }
    } else if (e.type === 'result') {
      t.completed = true;
      t.turns = num(e.num_turns) || t.turns;
      // An error result may carry no usage: the replies streamed before it then count.
      if (e.usage) t.usage = anthropicUsage(e.usage);
      if (typeof e.total_cost_usd === 'number') t.costUsd = e.total_cost_usd;
      const models = Object.values(obj(e.modelUsage)).map(obj);
      t.costAtListPrices = models.length > 0 && models.every((m) => m.costBasis === 'list');
      const result = str(e.result) ?? '';
      const status = typeof e.api_error_status === 'number' ? e.api_error_status : undefined;
      if (e.is_error === true || (typeof e.subtype === 'string' && e.subtype.startsWith('error'))) {
        const message = result || (Array.isArray(e.errors) ? e.errors.join('; ') : '') || String(e.subtype);
        t.error = statusKind(status ?? statusIn(message), short(message, 400));
      } else {
        t.answer = result || lastText || '';
      }
    }
  }
  if (!t.usage && replies.size) t.usage = sumUsage([...replies.values()]);
  return t;
}

/** Anthropic usage (input excludes cache reads and writes) as AgentUsage (input includes them). */
function anthropicUsage(value: unknown): AgentUsage {
  const u = obj(value);
  const cacheRead = num(u.cache_read_input_tokens);
  const cacheWrite = num(u.cache_creation_input_tokens);
  return {
    inputTokens: num(u.input_tokens) + cacheRead + cacheWrite,
    outputTokens: num(u.output_tokens),
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
  };
}

export function sumUsage(all: readonly AgentUsage[]): AgentUsage {
  const total: AgentUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  for (const u of all) {
    total.inputTokens += u.inputTokens;
    total.outputTokens += u.outputTokens;
    total.cacheReadTokens += u.cacheReadTokens;
    total.cacheWriteTokens += u.cacheWriteTokens;
  }
  return total;
}

/** Codex `exec --json`. */
export function parseCodex(stdout: string, skillName: string): AgentTranscript {
  const t: AgentTranscript = { skillLoaded: false, toolCalls: [], turns: 0, completed: false };
  let fatal: string | undefined;
  let lastMessage: string | undefined;
  const usage: AgentUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  let sawUsage = false;
  // The last event when it is a retry still in progress (Codex waits for the network without end).
  let retrying: string | undefined;
  for (const e of lines(stdout)) {
    retrying = undefined;
    if (e.type === 'item.completed') {
      const item = obj(e.item);
      switch (item.type) {
        case 'agent_message':
          lastMessage = str(item.text) ?? '';
          t.turns++;
          break;
        case 'command_execution': {
          const command = str(item.command) ?? '';
          t.toolCalls.push({ name: 'shell', detail: short(command) });
          if (mentionsSkillFile(command, skillName)) t.skillLoaded = true;
          t.turns++;
          break;
        }
        case 'file_change':
        case 'mcp_tool_call':
        case 'web_search':
          t.toolCalls.push({
            name: String(item.type),
            ...(str(item.query) ? { detail: short(str(item.query)!) } : {}),
          });
          t.turns++;
          break;
        default:
          break;
      }
    } else if (e.type === 'turn.completed') {
      t.completed = true;
      const u = obj(e.usage);
      sawUsage = true;
      usage.inputTokens += num(u.input_tokens);
      usage.outputTokens += num(u.output_tokens);
      usage.cacheReadTokens += num(u.cached_input_tokens);
      usage.cacheWriteTokens += num(u.cache_write_input_tokens);
    } else if (e.type === 'turn.failed') {
      t.completed = true;
      fatal = str(obj(e.error).message) ?? 'the turn failed';
    } else if (e.type === 'error') {
      // "Reconnecting... n/5" lines are retries in progress; the last error stands if the turn fails.
      const message = str(e.message) ?? '';
      if (!/^Reconnecting\.\.\./.test(message)) fatal = message;
      else retrying = message;
    }
  }
  if (sawUsage) t.usage = usage;
  // Cut short while still retrying with no reply: the provider is unreachable or failing, not slow.
  if (retrying !== undefined && fatal === undefined && lastMessage === undefined && !t.completed) {
    t.error = statusKind(statusIn(retrying), short(`no reply from the model provider: ${retrying}`, 400));
    return t;
  }
  if (fatal !== undefined && lastMessage === undefined) {
    t.error = statusKind(statusIn(fatal), short(fatal, 400));
  } else if (t.completed && fatal === undefined) {
    t.answer = lastMessage ?? '';
  } else if (lastMessage !== undefined && fatal === undefined) {
    t.answer = lastMessage;
  } else if (fatal !== undefined) {
    t.error = statusKind(statusIn(fatal), short(fatal, 400));
  }
  return t;
}

/** Copilot CLI `-p --output-format json`. */
export function parseCopilot(stdout: string, skillName: string): AgentTranscript {
  const t: AgentTranscript = { skillLoaded: false, toolCalls: [], turns: 0, completed: false };
  let lastMessage: string | undefined;
  let exitCode: number | undefined;
  // On SIGTERM (our time limit or a cancel) Copilot CLI aborts the turn and still prints a `result`
  // with exit code 0: that ends a cancelled session, not a model reply.
  let aborted = false;
  for (const e of lines(stdout)) {
    const data = obj(e.data);
    switch (e.type) {
      case 'abort':
        aborted = true;
        break;
      case 'assistant.idle':
        if (data.aborted === true) aborted = true;
        break;
      case 'session.skills_loaded':
        t.skillsAvailable = (Array.isArray(data.skills) ? data.skills : [])
          .map((s) => str(obj(s).name))
          .filter((s): s is string => s !== undefined);
        break;
      case 'assistant.turn_start':
        t.turns++;
        break;
      case 'assistant.message': {
        const content = str(data.content) ?? '';
        if (content.trim()) lastMessage = content;
        t.model = str(data.model) ?? t.model;
        break;
      }
      case 'tool.execution_start': {
        const name = str(data.toolName) ?? '?';
        const args = obj(data.arguments);
        const detail = str(args.skill) ?? str(args.path) ?? str(args.command) ?? str(args.pattern);
        t.toolCalls.push({ name, ...(detail ? { detail: short(detail) } : {}) });
        if (name === 'skill' && args.skill === skillName) t.skillLoaded = true;
        if (detail && mentionsSkillFile(detail, skillName)) t.skillLoaded = true;
        break;
      }
      case 'session.error': {
        const message = str(data.message) ?? 'the session failed';
        const status = typeof data.statusCode === 'number' ? data.statusCode : statusIn(message);
        const err = statusKind(status, short(message, 400));
        if (data.errorType === 'authentication') err.kind = 'auth';
        t.error = err;
        break;
      }
      case 'result':
        t.completed = true;
        exitCode = typeof e.exitCode === 'number' ? e.exitCode : undefined;
        break;
      default:
        break;
    }
  }
  if (!t.error && t.completed && !aborted) {
    if (exitCode !== undefined && exitCode !== 0 && lastMessage === undefined) {
      t.error = { kind: 'crash', message: `the CLI reported exit code ${exitCode}`, transient: false };
    } else {
      t.answer = lastMessage ?? '';
    }
  }
  return t;
}

export function parseTranscript(format: AgentFormat, stdout: string, skillName: string): AgentTranscript {
  switch (format) {
    case 'claude':
      return parseClaude(stdout, skillName);
    case 'codex':
      return parseCodex(stdout, skillName);
    case 'copilot':
      return parseCopilot(stdout, skillName);
    case 'text':
      return { answer: stdout, skillLoaded: false, toolCalls: [], turns: 1, completed: true };
  }
}

/**
 * Tokens from a Codex session file (`$CODEX_HOME/sessions/…/rollout-*.jsonl`): its last
 * `token_count` event's running total, written after every model reply, so a run cut short before
 * `turn.completed` still shows what it spent. Undefined when the file has no such event.
 */
export function parseCodexRollout(text: string): AgentUsage | undefined {
  let usage: AgentUsage | undefined;
  for (const e of lines(text)) {
    const payload = obj(e.payload);
    if (e.type !== 'event_msg' || payload.type !== 'token_count') continue;
    const total = obj(obj(payload.info).total_token_usage);
    if (!Object.keys(total).length) continue;
    usage = {
      inputTokens: num(total.input_tokens),
      outputTokens: num(total.output_tokens),
      cacheReadTokens: num(total.cached_input_tokens),
      cacheWriteTokens: num(total.cache_write_input_tokens),
    };
  }
  return usage;
}

/**
 * Tokens from Copilot CLI's OpenTelemetry file exporter (COPILOT_OTEL_FILE_EXPORTER_PATH): the sum
 * of its `chat` spans' `gen_ai.usage.*` attributes. Undefined when the file has no chat span.
 */
export function parseCopilotOtel(text: string): AgentUsage | undefined {
  const usage: AgentUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  let spans = 0;
  for (const e of lines(text)) {
    if (e.type !== 'span') continue;
    const a = obj(e.attributes);
    if (a['gen_ai.operation.name'] !== 'chat') continue;
    spans++;
    usage.inputTokens += num(a['gen_ai.usage.input_tokens']);
    usage.outputTokens += num(a['gen_ai.usage.output_tokens']);
    usage.cacheReadTokens += num(a['gen_ai.usage.cache_read.input_tokens']);
    usage.cacheWriteTokens += num(a['gen_ai.usage.cache_write.input_tokens']);
  }
  return spans ? usage : undefined;
}
