/**
 * The signals that ask a command to stop: Ctrl-C (SIGINT), a kill or a CI time limit (SIGTERM),
 * and a closed terminal or dropped SSH session (SIGHUP). Each stops the run at its next safe point,
 * so the agent CLIs it started are ended and their task folders removed; left to Node's default, a
 * SIGTERM or SIGHUP would end this process alone and leave the agents running.
 */
import { readFileSync } from 'node:fs';

/**
 * Whether SIGHUP was set to be ignored when this process started (`nohup skillopt train …`). A
 * listener would override that (Node installs its own handler), stopping a run the user meant to
 * outlive the terminal; so it is listened to only where the process can tell it was not ignored
 * (Linux's /proc), and never elsewhere.
 */
function hangupIgnored(): boolean {
  try {
    const mask = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    return mask === undefined || (parseInt(mask.slice(-1), 16) & 1) === 1;
  } catch {
    return true;
  }
}

const STOP_SIGNALS: readonly NodeJS.Signals[] = hangupIgnored()
  ? ['SIGINT', 'SIGTERM']
  : ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Calls `onStop` on each stop signal until the returned function is called. */
export function onStopSignals(onStop: () => void): () => void {
  for (const s of STOP_SIGNALS) process.on(s, onStop);
  return () => {
    for (const s of STOP_SIGNALS) process.off(s, onStop);
  };
}
