// One build for every entry point. `--watch` keeps all contexts alive and prints the
// `[watch] build started/finished` lines the $esbuild-watch problem matcher expects;
// `--production` minifies and drops source maps. Metafiles land in dist/meta/ for `npm run bench`.
import * as esbuild from 'esbuild';
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
/** The one version string: src/protocol/vocabulary.ts reads it as `__SKILLOPT_VERSION__`. */
const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

/** @type {Array<{name: string, options: import('esbuild').BuildOptions}>} */
const entries = [
  {
    name: 'extension',
    options: {
      entryPoints: ['src/extension/extension.ts'],
      outfile: 'dist/extension.js',
      platform: 'node',
      format: 'cjs',
      external: ['vscode'],
    },
  },
  {
    name: 'worker',
    options: {
      entryPoints: ['src/worker/main.ts'],
      outfile: 'dist/worker.js',
      platform: 'node',
      format: 'cjs',
    },
  },
  {
    // The CLI's entry: a small launcher that runs cli-main.js through V8's code cache.
    name: 'cli',
    options: {
      entryPoints: ['src/cli/launch.ts'],
      outfile: 'dist/cli.js',
      platform: 'node',
      format: 'cjs',
      banner: { js: '#!/usr/bin/env node' },
    },
  },
  {
    name: 'cli-main',
    options: {
      entryPoints: ['src/cli/main.ts'],
      outfile: 'dist/cli-main.js',
      platform: 'node',
      format: 'cjs',
    },
  },
  {
    name: 'webview',
    options: {
      entryPoints: ['src/webview/main.ts'],
      outfile: 'dist/webview/main.js',
      platform: 'browser',
      format: 'iife',
    },
  },
].filter((e) => existsSync(e.options.entryPoints[0]));

/** Reformat errors as `file:line:col:` so VS Code's problem matcher links them. */
const problemMatcher = {
  name: 'problem-matcher',
  setup(build) {
    build.onStart(() => {
      if (watch) console.log('[watch] build started');
    });
    build.onEnd((result) => {
      for (const { text, location } of result.errors) {
        console.error(`✘ [ERROR] ${text}`);
        if (location) console.error(`    ${location.file}:${location.line}:${location.column}:`);
      }
      if (watch) console.log('[watch] build finished');
    });
  },
};

mkdirSync('dist/meta', { recursive: true });
const contexts = await Promise.all(
  entries.map(({ options }) =>
    esbuild.context({
      bundle: true,
      target: 'node20',
      sourcemap: !production,
      minify: production,
      metafile: true,
      logLevel: 'silent',
      define: { __SKILLOPT_VERSION__: JSON.stringify(version) },
      ...options,
      ...(options.platform === 'browser' ? { target: 'es2022' } : {}),
      plugins: [problemMatcher],
    }),
  ),
);

if (watch) {
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  let failed = false;
  for (const [i, ctx] of contexts.entries()) {
    try {
      const result = await ctx.rebuild();
      writeFileSync(`dist/meta/${entries[i].name}.json`, JSON.stringify(result.metafile));
    } catch {
      failed = true;
    }
    await ctx.dispose();
  }
  if (existsSync('dist/cli.js')) chmodSync('dist/cli.js', 0o755);
  if (failed) process.exit(1);
}
