/**
 * The engine logs through this port; the CLI prints, the worker forwards to the extension's
 * LogOutputChannel. Nothing in the engine writes to the console directly.
 */
import { LOG_LEVELS, type LogLevel } from '../protocol/vocabulary';

export interface Logger {
  log(level: LogLevel, component: string, message: string): void;
}

export const silentLogger: Logger = { log: () => undefined };

export const logLevels: readonly LogLevel[] = LOG_LEVELS;

export function levelAtLeast(level: LogLevel, min: LogLevel): boolean {
  return logLevels.indexOf(level) >= logLevels.indexOf(min);
}
