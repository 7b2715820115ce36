/**
 * What `npm run package` puts in the .vsix: `vsce ls` with the package script's own flags, over a copy of
 * the repository's files plus what a developer's tree also holds (build outputs with source maps and
 * metafiles, the CLI bundle, caches, run folders, an old .vsix, node_modules). Only files the installed
 * extension uses may be listed, and the icon, LICENSE, marketplace README and bundles must be.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';

const root = join(__dirname, '..', '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  main: string;
  icon?: string;
  scripts: Record<string, string>;
  contributes: { grammars: Array<{ path: string }> };
};
const vsce = join(dirname(require.resolve('@vscode/vsce/package.json')), 'vsce');

/** The README the package script hands to vsce; the developers' README.md stays out. */
function readmePath(): string {
  const m = /--readme-path (\S+)/.exec(manifest.scripts.package ?? '');
  assert.ok(m, 'the package script passes --readme-path');
  return m[1]!;
}

/** The bundles the extension loads: its main file, the engine process it forks, the Gate History page. */
const bundles = [manifest.main.replace(/^\.\//, ''), 'dist/worker.js', 'dist/webview/main.js'];

function allowed(file: string): boolean {
  if (['package.json', 'LICENSE', readmePath(), manifest.icon, ...bundles].includes(file)) return true;
  return [/^syntaxes\/[^/]+\.json$/, /^media\/[^/]+\.(svg|css)$/].some((p) => p.test(file));
}

function packaged(cwd: string): string[] {
  const out = execFileSync(
    process.execPath,
    [vsce, 'ls', '--no-dependencies', '--readme-path', readmePath()],
    {
      cwd,
      encoding: 'utf8',
    },
  );
  return out.split('\n').filter((l) => l.trim() !== '');
}

/** Every file git would see here (tracked, and new ones not ignored), copied with its content. */
function copyRepository(to: string): void {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((f) => f !== '' && f !== 'node_modules');
  for (const f of files) {
    mkdirSync(dirname(join(to, f)), { recursive: true });
    try {
      copyFileSync(join(root, f), join(to, f));
    } catch {
      // A file deleted in the working tree but still in the index is not in the package either.
    }
  }
}

const developerFiles = [
  'dist/extension.js',
  'dist/extension.js.map',
  'dist/worker.js',
  'dist/worker.js.map',
  'dist/cli.js',
  'dist/cli.js.map',
  'dist/cli-main.js',
  'dist/webview/main.js',
  'dist/webview/main.js.map',
  'dist/meta/extension.json',
  '.cache/vscode/code-server',
  '.skillopt/runs/demo/history.json',
  'skillopt-0.0.9.vsix',
  'node_modules/openai/index.js',
  '.vscode-test/user-data/state.json',
];

describe('the packaged .vsix (vsce ls with the package script flags)', function () {
  this.timeout(60_000);
  let tree: string;
  let files: string[];

  before(() => {
    tree = mkdtempSync(join(tmpdir(), 'skillopt-vsix-'));
    copyRepository(tree);
    for (const f of developerFiles) {
      mkdirSync(dirname(join(tree, f)), { recursive: true });
      writeFileSync(join(tree, f), 'x');
    }
    files = packaged(tree);
  });
  after(() => rmSync(tree, { recursive: true, force: true }));

  it('holds nothing the installed extension does not use', () => {
    assert.deepEqual(
      files.filter((f) => !allowed(f)),
      [],
    );
  });

  it('holds the bundles, grammars, icon, LICENSE and the marketplace README', () => {
    const grammars = manifest.contributes.grammars.map((g) => g.path.replace(/^\.\//, ''));
    const required = ['package.json', 'LICENSE', readmePath(), ...bundles, ...grammars];
    assert.ok(manifest.icon, 'package.json names an icon');
    required.push(manifest.icon);
    assert.deepEqual(
      required.filter((f) => !files.includes(f)),
      [],
    );
  });

  it('holds only media the extension names, and every media file it names', () => {
    const sources = [readFileSync(join(root, 'package.json'), 'utf8')];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(dir, e.name));
        else if (e.name.endsWith('.ts')) sources.push(readFileSync(join(dir, e.name), 'utf8'));
      }
    };
    walk(join(root, 'src', 'extension'));
    const text = sources.join('\n');
    const media = files.filter((f) => f.startsWith('media/') && f !== readmePath());
    assert.deepEqual(
      media.filter((f) => !text.includes(`'${posix.basename(f)}'`) && !text.includes(`"${f}"`)),
      [],
      'packaged media files nothing refers to',
    );
    const named = readdirSync(join(root, 'media')).filter(
      (n) => text.includes(`'${n}'`) || text.includes(`"media/${n}"`),
    );
    assert.deepEqual(
      named.filter((n) => !files.includes(`media/${n}`)),
      [],
      'media files the extension refers to but the package leaves out',
    );
  });

  it('has a 128×128 PNG icon, an MIT LICENSE and a README written for users', () => {
    const png = readFileSync(join(root, manifest.icon!));
    assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [128, 128]);
    assert.match(
      readFileSync(join(root, 'LICENSE'), 'utf8'),
      /^MIT License\n\nCopyright \(c\) \d{4} SkillOpt/,
    );
    assert.notEqual(readmePath(), 'README.md');
    const readme = readFileSync(join(root, readmePath()), 'utf8');
    for (const topic of [
      'Optimize This Skill',
      'Apply Best Skill',
      'SecretStorage',
      '.skillopt/runs',
      'Privacy',
    ]) {
      assert.ok(readme.includes(topic), `the marketplace README covers ${topic}`);
    }
  });
});
