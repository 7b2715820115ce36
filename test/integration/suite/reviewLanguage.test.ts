/**
 * The protected block in a real VS Code: folding ranges, folded by default in a skill under
 * optimization, the hover, and the injected grammar's scopes on a fixture, tokenized by the same
 * TextMate engine and Markdown grammar the running VS Code uses.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as vscode from 'vscode';
import { activate, closeAll, openSkill, repoRoot, waitFor } from './reviewSupport';

const fixture = [
  '# Skill', // 0
  '', // 1
  '- Give only the final answer.', // 2
  '', // 3
  '```text', // 4
  'A fenced example mentioning SLOW_UPDATE_END.', // 5
  '```', // 6
  '', // 7
  '<!-- SLOW_UPDATE_START -->', // 8
  '- Check the answer against every rule.', // 9
  '- Prefer the official name.', // 10
  '<!-- SLOW_UPDATE_END -->', // 11
  '', // 12
  'After the block.', // 13
  '',
].join('\n');

/** Tokenized only: the engine would refuse a skill with a second start marker, fenced or not. */
const fenced = ['```text', '<!-- SLOW_UPDATE_START -->', '```', ''].join('\n');

interface Token {
  startIndex: number;
  endIndex: number;
  scopes: string[];
}
interface Grammar {
  tokenizeLine(line: string, state: unknown): { tokens: Token[]; ruleStack: unknown };
}
interface TextMate {
  Registry: new (options: unknown) => { loadGrammar(scope: string): Promise<Grammar | null> };
  INITIAL: unknown;
}
interface Oniguruma {
  loadWASM(data: ArrayBuffer): Promise<void>;
  OnigScanner: new (patterns: string[]) => unknown;
  OnigString: new (s: string) => unknown;
}

async function load<T>(path: string): Promise<T> {
  const mod = (await import(pathToFileURL(path).href)) as { default?: T } & T;
  return mod.default ?? mod;
}

describe('review: the protected block', function () {
  this.timeout(30_000);
  let dir: string;
  let skill: string;

  before(async () => {
    await activate();
    dir = mkdtempSync(join(tmpdir(), 'skillopt-lang-it-'));
    skill = join(dir, 'SKILL.md');
    writeFileSync(skill, fixture);
    // A skillopt.yaml beside the skill makes it a skill under optimization.
    writeFileSync(join(dir, 'skillopt.yaml'), 'env:\n  skill_init: SKILL.md\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(closeAll);

  it('offers a folding range over the block', async () => {
    const editor = await openSkill(skill);
    const ranges = await waitFor(
      () =>
        vscode.commands.executeCommand<vscode.FoldingRange[]>(
          'vscode.executeFoldingRangeProvider',
          editor.document.uri,
        ),
      'folding ranges',
    );
    assert.ok(
      ranges.some((r) => r.start === 8 && r.end === 11 && r.kind === vscode.FoldingRangeKind.Region),
      JSON.stringify(ranges),
    );
  });

  it('folds the block when a skill under optimization opens', async () => {
    // A skill of its own: another test may have folded (and closed) the first one already.
    const folder = join(dir, 'fold');
    mkdirSync(folder);
    writeFileSync(join(folder, 'SKILL.md'), fixture);
    writeFileSync(join(folder, 'skillopt.yaml'), 'env:\n  skill_init: SKILL.md\n');
    const editor = await openSkill(join(folder, 'SKILL.md'));
    await waitFor(
      () => !editor.visibleRanges.some((r) => r.start.line <= 9 && r.end.line >= 9),
      'line 9 hidden by the fold',
    );
    assert.ok(
      editor.visibleRanges.some((r) => r.start.line <= 8 && r.end.line >= 8),
      'the start marker stays visible',
    );
  });

  it('explains in a hover who writes the block', async () => {
    const editor = await openSkill(skill);
    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
      'vscode.executeHoverProvider',
      editor.document.uri,
      new vscode.Position(8, 6),
    );
    const text = hovers
      .flatMap((h) => h.contents)
      .map((c) => (typeof c === 'string' ? c : 'value' in c ? c.value : ''))
      .join('\n');
    assert.match(text, /Protected slow-update block/);
    assert.match(text, /slow update/);
  });

  it('scopes the markers and the block with the injected grammar', async () => {
    const root = repoRoot();
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      contributes: { grammars: Array<{ scopeName: string; path: string; injectTo?: string[] }> };
    };
    const entry = manifest.contributes.grammars.find((g) => g.injectTo?.includes('text.html.markdown'));
    assert.ok(entry, 'the grammar is contributed as an injection into Markdown');
    // SKILL.md opens as language `skill`, whose grammar wraps Markdown's under its own root scope.
    assert.ok(entry.injectTo?.includes('text.html.markdown.prompt'), 'and into the skill / prompt grammar');
    const doc = await openSkill(skill);
    assert.equal(doc.document.languageId, 'skill');
    const app = vscode.env.appRoot;
    const tm = await load<TextMate>(join(app, 'node_modules', 'vscode-textmate', 'release', 'main.js'));
    const onig = await load<Oniguruma>(join(app, 'node_modules', 'vscode-oniguruma', 'release', 'main.js'));
    const wasm = readFileSync(join(app, 'node_modules', 'vscode-oniguruma', 'release', 'onig.wasm'));
    await onig.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer);
    const grammars: Record<string, string> = {
      'text.html.markdown': join(
        app,
        'extensions',
        'markdown-basics',
        'syntaxes',
        'markdown.tmLanguage.json',
      ),
      'text.html.markdown.prompt': join(
        app,
        'extensions',
        'prompt-basics',
        'syntaxes',
        'prompt.tmLanguage.json',
      ),
      [entry.scopeName]: join(root, entry.path),
    };
    const registry = new tm.Registry({
      onigLib: Promise.resolve({
        createOnigScanner: (p: string[]) => new onig.OnigScanner(p),
        createOnigString: (s: string) => new onig.OnigString(s),
      }),
      loadGrammar: (scope: string) => {
        const path = grammars[scope];
        return Promise.resolve(path ? (JSON.parse(readFileSync(path, 'utf8')) as unknown) : null);
      },
      getInjections: (scope: string) => (entry.injectTo?.includes(scope) ? [entry.scopeName] : undefined),
    });
    for (const rootScope of ['text.html.markdown', 'text.html.markdown.prompt']) {
      const grammar = await registry.loadGrammar(rootScope);
      assert.ok(grammar, rootScope);
      checkScopes(grammar, rootScope, tm.INITIAL);
    }
  });
});

function checkScopes(grammar: Grammar, rootScope: string, initial: unknown): void {
  {
    const tokenize = (text: string): Array<Array<{ text: string; scopes: string[] }>> => {
      let state = initial;
      return text.split('\n').map((line) => {
        const r = grammar.tokenizeLine(line, state);
        state = r.ruleStack;
        return r.tokens.map((t) => ({ text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes }));
      });
    };
    const scopesAt = tokenize(fixture);
    const has = (line: number, text: string, scope: string): boolean =>
      scopesAt[line]!.some((t) => t.text.includes(text) && t.scopes.some((s) => s.startsWith(scope)));
    assert.ok(
      has(8, 'SLOW_UPDATE_START', 'keyword.control.marker.skillopt.slow-update.start'),
      JSON.stringify(scopesAt[8]),
    );
    assert.ok(has(8, '<!--', 'punctuation.definition.comment.begin.html'));
    assert.ok(
      has(9, 'Check the answer', 'markup.quote.skillopt.protected.slow-update'),
      JSON.stringify(scopesAt[9]),
    );
    assert.ok(has(9, 'Check the answer', 'meta.block.skillopt.slow-update'));
    assert.ok(
      has(11, 'SLOW_UPDATE_END', 'keyword.control.marker.skillopt.slow-update.end'),
      JSON.stringify(scopesAt[11]),
    );
    assert.ok(
      !scopesAt[13]!.some((t) => t.scopes.some((s) => s.includes('skillopt'))),
      'the block ends at its end marker',
    );
    assert.ok(
      !tokenize(fenced)[1]!.some((t) => t.scopes.some((s) => s.includes('skillopt'))),
      'no marker inside a code fence',
    );
    assert.ok(scopesAt[0]!.every((t) => t.scopes[0] === rootScope));
  }
}
