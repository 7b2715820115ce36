/**
 * The CLI's entry (dist/cli.js): runs the bundle (dist/cli-main.js) through V8's code cache, so
 * every start after the first skips parsing and compiling ~2 MB of JavaScript, the largest part of
 * the time before a run's first request. Node ≥ 22.1 has a compile cache built in, but the CLI
 * supports Node 20; v8-compile-cache makes its cache before the code runs, so it holds only the top
 * level and saved half as much here. This file stays tiny and imports only Node built-ins: it is
 * compiled on every start.
 *
 * The cache lives in a private per-user folder, one file per bundle content, Node version and
 * command (a `validate` start compiles other functions than a `train` run), written when the process
 * exits, with whatever it compiled by then. A cache that cannot be read or written is only slower.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { constants, Script } from 'node:vm';

/** The commands worth a cache; `--help` and `--version` start without one. */
const CACHED_COMMANDS = new Set(['train', 'eval', 'validate', 'apply-edits']);
/** Cache files kept (about 1.5 MB each). */
const KEPT_CACHES = 8;

/** Our own folder, closed to other users: a planted cache file would be code we run. */
function privateCacheDir(): string | undefined {
  const uid = process.getuid?.();
  const dir = join(tmpdir(), `skillopt-code-cache${uid === undefined ? '' : `-${uid}`}`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = statSync(dir);
    if (uid !== undefined && (st.uid !== uid || (st.mode & 0o077) !== 0)) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

type BundleFn = (
  exports: object,
  require: NodeJS.Require,
  module: { exports: Record<string, unknown> },
  filename: string,
  dirname: string,
) => void;

export interface LoadedBundle {
  exports: Record<string, unknown>;
  /** Whether V8 took its compiled code from the cache. */
  fromCache: boolean;
  /** Write the cache with what has been compiled so far (a no-op when it was used or cannot be kept). */
  saveCache(): void;
}

/** Run a CommonJS bundle as `require` would, through the code cache of `command`. */
export function runBundle(file: string, command: string | undefined): LoadedBundle {
  const source = readFileSync(file, 'utf8');
  const dir = command && CACHED_COMMANDS.has(command) ? privateCacheDir() : undefined;
  // V8 checks a cache against the source's length only. Any rewrite of the file changes its change
  // time (which no one can set back), and hashing 2 MB of content would cost more than a start saves.
  const st = statSync(file);
  const key = createHash('sha256')
    .update([file, st.ino, st.size, st.mtimeMs, st.ctimeMs, process.version].join('\0'))
    .digest('hex')
    .slice(0, 24);
  const cachePath = dir ? join(dir, `${key}-${command}.bin`) : undefined;
  let cached: Buffer | undefined;
  try {
    if (cachePath) cached = readFileSync(cachePath);
  } catch {
    cached = undefined;
  }
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    ...(cached ? { cachedData: cached } : {}),
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const mod = { exports: {} as Record<string, unknown> };
  (script.runInThisContext() as BundleFn)(mod.exports, createRequire(file), mod, file, dirname(file));
  const fromCache = cached !== undefined && !script.cachedDataRejected;
  return {
    exports: mod.exports,
    fromCache,
    saveCache: () => {
      if (dir && cachePath && !fromCache) writeCache(dir, cachePath, script.createCachedData());
    },
  };
}

function writeCache(dir: string, path: string, data: Buffer): void {
  try {
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, data, { mode: 0o600 });
    renameSync(tmp, path);
    // Caches of bundles replaced since: the newest few are kept (checkouts side by side).
    const files = readdirSync(dir)
      .filter((name) => name.endsWith('.bin'))
      .map((name) => ({ name, at: statSync(join(dir, name)).mtimeMs }))
      .sort((a, b) => b.at - a.at);
    for (const { name } of files.slice(KEPT_CACHES)) rmSync(join(dir, name), { force: true });
  } catch {
    // Only the next start is slower.
  }
}

if (require.main === module) {
  const argv = process.argv.slice(2);
  const cli = runBundle(join(__dirname, 'cli-main.js'), argv[0]);
  // At exit the cache holds every function the command compiled, not only the top level.
  process.once('exit', () => cli.saveCache());
  void (cli.exports as { main(argv: readonly string[]): Promise<number> }).main(argv).then((code) => {
    process.exitCode = code;
  });
}
