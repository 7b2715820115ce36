import * as vscode from 'vscode';

/** Debounce for redraws while the person types or events arrive in bursts. */
const renderDelayMs = 60;

/** One debounced "this document's review changed" signal per document. */
export class Redraws implements vscode.Disposable {
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri | undefined>();
  /** Fired (debounced) when a document's review changes: redraw decorations and lenses. */
  readonly onDidChange = this.changed.event;

  schedule(uri: vscode.Uri): void {
    const key = uri.toString();
    if (this.timers.has(key)) return;
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.changed.fire(uri);
      }, renderDelayMs),
    );
  }

  dispose(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.changed.dispose();
  }
}
