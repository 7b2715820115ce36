/**
 * The "SkillOpt" LogOutputChannel: the host's own lines carry a `[component]` tag, the engine's
 * lines arrive through the protocol with theirs. The channel filters by the level the user chose
 * (Output view → gear, or "Developer: Set Log Level").
 */
import * as vscode from 'vscode';
import type { LogLevel } from '../protocol/vocabulary';

export function createLogChannel(): vscode.LogOutputChannel {
  return vscode.window.createOutputChannel('SkillOpt', { log: true });
}

/** The engine's minimum level for the channel's current level (so it does not send what is dropped). */
export function engineLevel(channel: vscode.LogOutputChannel): LogLevel {
  switch (channel.logLevel) {
    case vscode.LogLevel.Trace:
      return 'trace';
    case vscode.LogLevel.Debug:
      return 'debug';
    case vscode.LogLevel.Warning:
      return 'warn';
    case vscode.LogLevel.Error:
    case vscode.LogLevel.Off:
      return 'error';
    default:
      return 'info';
  }
}

export function writeLog(
  channel: vscode.LogOutputChannel,
  level: LogLevel,
  component: string,
  message: string,
): void {
  const line = `[${component}] ${message}`;
  switch (level) {
    case 'trace':
      channel.trace(line);
      return;
    case 'debug':
      channel.debug(line);
      return;
    case 'info':
      channel.info(line);
      return;
    case 'warn':
      channel.warn(line);
      return;
    case 'error':
      channel.error(line);
      return;
  }
}

/** The text to show for any thrown value; the stack goes to the log, not the notification. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function errorDetail(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

/** Typed reason of an engine error (SkillOptError reasons, or rpc `timeout`/`cancelled`/`closed`). */
export function errorReason(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('reason' in err)) return undefined;
  const r = err.reason;
  return typeof r === 'string' ? r : undefined;
}
