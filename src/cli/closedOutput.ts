/**
 * A reader that stops reading (`skillopt train … | head -1`) closes the pipe, and every later
 * write fails with EPIPE, which node reports as an unhandled stream error: a stack trace, and a
 * run cut off between two writes. Instead, output to the closed stream is dropped, and a run stops
 * at its next safe point as on Ctrl-C (nothing accepted is lost; the ledger stays whole).
 */
let installed = false;

export function handleClosedOutput(): void {
  if (installed) return;
  installed = true;
  let stopping = false;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      stream.write = () => true;
      if (stopping) return;
      stopping = true;
      // The commands that run something stop on SIGINT at a safe point; the others just finish.
      process.emit('SIGINT', 'SIGINT');
    });
  }
}
