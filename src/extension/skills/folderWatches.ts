/**
 * Direct, non-recursive watches on a set of folders (each skills location, the folders inside it,
 * trained skills' folders). VS Code's own watcher serves folders inside the workspace from its one
 * recursive watcher, which can miss a file written right after its folder was created, and a
 * folder deleted soon after; a watch set on the folder itself, once a scan has found it, misses
 * nothing that happens in it afterwards. Folders outside the workspace are covered the same way.
 */
import { watch, type FSWatcher } from 'node:fs';

export class FolderWatches {
  private readonly watches = new Map<string, FSWatcher>();

  constructor(
    private readonly onChange: () => void,
    private readonly onError: (dir: string, err: Error) => void,
  ) {}

  /** Watches exactly `dirs` from now on: new ones are added, the others closed. */
  set(dirs: Iterable<string>): void {
    const wanted = new Set(dirs);
    for (const [dir, w] of this.watches) {
      if (wanted.has(dir)) continue;
      w.close();
      this.watches.delete(dir);
    }
    for (const dir of wanted) {
      if (this.watches.has(dir)) continue;
      try {
        const w = watch(dir, { persistent: false }, () => this.onChange());
        // A watched folder that goes away ends its watch; the next scan decides what to watch.
        w.on('error', (err) => {
          w.close();
          this.watches.delete(dir);
          this.onError(dir, err);
          this.onChange();
        });
        this.watches.set(dir, w);
      } catch (err) {
        // Gone between the scan and now, or no watches left: said, and the scan after the next change retries.
        this.onError(dir, err as Error);
      }
    }
  }

  dispose(): void {
    for (const w of this.watches.values()) w.close();
    this.watches.clear();
  }
}
