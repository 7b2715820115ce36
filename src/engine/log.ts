/**
 * The engine logs through this port; the CLI prints, the worker forwards to the extension's
 * LogOutputChannel. Nothing in the engine writes to the console directly.
 */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, component: string, message: string): void;
}

export const silentLogger: Logger = { log: () => undefined };

export const logLevels: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error'];

export function levelAtLeast(level: LogLevel, min: LogLevel): boolean {
  return logLevels.indexOf(level) >= logLevels.indexOf(min);
}
