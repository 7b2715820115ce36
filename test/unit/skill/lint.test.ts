import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  lintSkillFile,
  lintSkillText,
  lintStatus,
  type LintContext,
  type LintFinding,
  type LintRange,
} from '../../../src/engine/skill/lint';
import { findPackageLinks } from '../../../src/engine/skill/lintLinks';

const ctx: LintContext = { file: '/skills/pdf-forms/SKILL.md', folderName: 'pdf-forms', exists: () => true };
const good =
  '---\nname: pdf-forms\ndescription: Fill PDF forms. Use when the user sends a PDF form.\n---\n# PDF forms\n';

const rules = (findings: LintFinding[]): string[] => findings.map((f) => f.rule);
const lint = (text: string, extra: Partial<LintContext> = {}): LintFinding[] =>
  lintSkillText(text, { ...ctx, ...extra });
const one = (findings: LintFinding[], rule: string): LintFinding => {
  const f = findings.find((x) => x.rule === rule);
  assert.ok(f, `expected ${rule} in ${JSON.stringify(rules(findings))}`);
  return f;
};

/** The text an editor holds after applying a fix's edit. */
function applyEdit(text: string, edit: { range: LintRange; newText: string }): string {
  const lines = text.split('\n');
  const offset = (line: number, col: number): number =>
    lines.slice(0, line).reduce((n, l) => n + l.length + 1, 0) + col;
  const r = edit.range;
  return (
    text.slice(0, offset(r.startLine, r.startCol)) + edit.newText + text.slice(offset(r.endLine, r.endCol))
  );
}

describe('SKILL.md lint', () => {
  it('finds nothing in a well-formed skill', () => {
    assert.deepEqual(lint(good), []);
  });

  describe('front matter', () => {
    it('reports a file without front matter, on its first line', () => {
      const f = one(lint('# PDF forms\n\nBody.\n'), 'front-matter-missing');
      assert.equal(f.severity, 'error');
      assert.deepEqual(f.range, { startLine: 0, startCol: 0, endLine: 0, endCol: 11 });
      assert.match(f.message, /Fix: start the file with `---`, `name: pdf-forms`/);
    });

    it('reports an unclosed block as such, not as missing', () => {
      const findings = lint('---\nname: pdf-forms\n# body\n');
      assert.deepEqual(rules(findings), ['front-matter-yaml']);
      assert.match(findings[0]?.message ?? '', /not closed/);
    });

    it('reports YAML errors at their line and checks no field of a broken block', () => {
      const findings = lint('---\nname: pdf-forms\ndescription: "open\n---\nbody\n');
      assert.ok(findings.length > 0);
      assert.ok(findings.every((f) => f.rule === 'front-matter-yaml' && f.severity === 'error'));
      assert.ok(findings.every((f) => f.range.startLine >= 1 && f.range.startLine <= 3));
    });

    it('accepts CRLF and a byte-order mark', () => {
      assert.deepEqual(lint(`\uFEFF${good.replace(/\n/g, '\r\n')}`), []);
    });
  });

  describe('name', () => {
    it('requires a name, with a fix that adds the folder name', () => {
      const text = '---\ndescription: Fill PDF forms.\n---\nbody\n';
      const f = one(lint(text), 'name-missing');
      assert.equal(f.severity, 'error');
      const fix = f.fixes.find((x) => x.id === 'name-from-folder');
      assert.ok(fix?.edit);
      assert.deepEqual(lint(applyEdit(text, fix.edit)), []);
    });

    it('treats an empty or non-string name as missing', () => {
      one(lint('---\nname: ""\ndescription: d\n---\n'), 'name-missing');
      assert.match(one(lint('---\nname: 12\ndescription: d\n---\n'), 'name-missing').message, /not a string/);
    });

    it('reports a name that is not the folder name, pointing at the value, fixed to the folder name', () => {
      const text = good.replace('name: pdf-forms', 'name: pdf-filler');
      const f = one(lint(text), 'name-folder');
      assert.equal(f.severity, 'error');
      assert.deepEqual(f.range, { startLine: 1, startCol: 6, endLine: 1, endCol: 16 });
      assert.match(
        f.message,
        /"pdf-filler" is not the name of its folder "pdf-forms".*Fix: set `name: pdf-forms`/,
      );
      const fix = f.fixes[0];
      assert.equal(fix?.id, 'name-from-folder');
      assert.ok(fix.edit);
      assert.equal(applyEdit(text, fix.edit), good);
    });

    it('has no folder rule for a loose Markdown file', () => {
      assert.deepEqual(lint(good.replace('pdf-forms', 'other'), { folderName: undefined }), []);
    });

    it('limits the name to 64 characters', () => {
      const long = 'a'.repeat(65);
      const f = one(
        lint(good.replace('name: pdf-forms', `name: ${long}`), { folderName: long }),
        'name-length',
      );
      assert.equal(f.severity, 'error');
      assert.match(f.message, /65 characters, over the limit of 64/);
      const max = 'a'.repeat(64);
      assert.deepEqual(lint(good.replace('name: pdf-forms', `name: ${max}`), { folderName: max }), []);
    });

    it('warns on a name outside lowercase letters, digits and single hyphens, with a suggestion', () => {
      for (const bad of ['PDF-Forms', 'pdf_forms', '-pdf', 'pdf-', 'pdf--forms', 'pdf forms']) {
        const f = one(
          lint(good.replace('name: pdf-forms', `name: ${bad}`), { folderName: bad }),
          'name-format',
        );
        assert.equal(f.severity, 'warning', bad);
      }
      assert.match(
        one(
          lint(good.replace('name: pdf-forms', 'name: PDF_Forms'), { folderName: 'PDF_Forms' }),
          'name-format',
        ).message,
        /use "pdf-forms"/,
      );
      for (const ok of ['a', '1password', 'pdf-forms-2']) {
        assert.deepEqual(lint(good.replace('name: pdf-forms', `name: ${ok}`), { folderName: ok }), [], ok);
      }
    });
  });

  describe('description', () => {
    it('requires a non-empty description', () => {
      one(lint('---\nname: pdf-forms\n---\n'), 'description-missing');
      const f = one(lint('---\nname: pdf-forms\ndescription: "  "\n---\n'), 'description-missing');
      assert.equal(f.severity, 'error');
      assert.equal(f.range.startLine, 2);
    });

    it('limits it to 1,024 characters, counted as the hosts count, with a trim fix', () => {
      const words = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
      const text = `---\nname: pdf-forms\ndescription: >-\n  ${words.slice(0, 900)}\n  ${words.slice(900)}\nlicense: MIT\n---\nbody\n`;
      const f = one(lint(text), 'description-length');
      assert.equal(f.severity, 'error');
      const fix = f.fixes[0];
      assert.equal(fix?.id, 'trim-description');
      assert.ok(fix.edit);
      assert.deepEqual(fix.edit.range, {
        startLine: 2,
        startCol: 0,
        endLine: 4,
        endCol: words.length - 900 + 2,
      });
      const fixed = applyEdit(text, fix.edit);
      assert.match(fixed, /\nlicense: MIT\n---\nbody\n$/);
      assert.deepEqual(lint(fixed), []);
      // 1,024 emoji are 1,024 characters (Codex counts code points), and whitespace runs count once.
      const exact = `---\nname: pdf-forms\ndescription: ${'\u{1F4A1}'.repeat(1024)}\n---\n`;
      assert.deepEqual(lint(exact), []);
      assert.deepEqual(lint(`---\nname: pdf-forms\ndescription: ${'a     '.repeat(400)}\n---\n`), []);
    });

    it('warns when the skills folder listing passes a host budget, alone or with its siblings', () => {
      const d = 'x'.repeat(1000);
      const text = `---\nname: pdf-forms\ndescription: ${d}\n---\n`;
      assert.deepEqual(lint(text, { siblings: [{ name: 'a', chars: 6999 }] }), []);
      const codex = one(lint(text, { siblings: [{ name: 'a', chars: 7001 }] }), 'description-budget');
      assert.equal(codex.severity, 'warning');
      assert.match(codex.message, /1 other skill\(s\).*total 8,001, over Codex's ~8,000-character/);
      const both = one(
        lint(text, { siblings: Array.from({ length: 15 }, () => ({ name: 'a', chars: 1000 })) }),
        'description-budget',
      );
      assert.match(both.message, /Codex's ~8,000 and Claude Code's ~15,000/);
      const alone = one(
        lint(`---\nname: pdf-forms\ndescription: ${'y'.repeat(9000)}\n---\n`),
        'description-budget',
      );
      assert.match(alone.message, /description alone is 9,000 characters/);
    });
  });

  describe('links into the package', () => {
    it('reports Markdown links and bare paths under references/, scripts/, assets/ that do not exist', () => {
      const text = `${good}\nRead [the guide](references/guide.md#forms) and run \`scripts/fill.py\`.\nSee ./assets/logo.png, [site](https://x.y/references/a.md), [top](#top), references/ and references/*.md.\n`;
      const have = new Set(['assets/logo.png']);
      const findings = lint(text, { exists: (p) => have.has(p) });
      assert.deepEqual(
        findings.map((f) => [f.rule, f.severity, f.range]),
        [
          ['link-broken', 'warning', { startLine: 6, startCol: 5, endLine: 6, endCol: 43 }],
          ['link-broken', 'warning', { startLine: 6, startCol: 53, endLine: 6, endCol: 68 }],
        ],
      );
      const [link, bare] = findings;
      assert.deepEqual(
        link?.fixes.map((f) => f.id),
        ['create-file', 'remove-link'],
      );
      assert.equal(link?.fixes[0]?.createFile, join('/skills/pdf-forms', 'references/guide.md'));
      const remove = link?.fixes[1]?.edit;
      assert.ok(remove);
      assert.match(applyEdit(text, remove), /^Read the guide and run/m);
      assert.deepEqual(
        bare?.fixes.map((f) => f.id),
        ['create-file'],
      );
    });

    it('checks links in a file without front matter too, and none when every file exists', () => {
      assert.deepEqual(rules(lint('See references/a.md.\n', { exists: () => false })), [
        'front-matter-missing',
        'link-broken',
      ]);
      assert.deepEqual(lint(`${good}See references/a.md.\n`), []);
    });

    it('reads angle-bracket targets, escapes and ./ prefixes, and ignores paths leaving the package', () => {
      assert.deepEqual(
        findPackageLinks(
          '[a](<references/my guide.md>) [b](./scripts/run%20me.sh) [c](references/../x.md) [d](scripts)',
        ).map((l) => l.path),
        ['references/my guide.md', 'scripts/run me.sh'],
      );
    });
  });

  describe('on disk', () => {
    let root = '';
    beforeEach(() => {
      root = mkdtempSync(join(tmpdir(), 'skillopt-lint-'));
    });
    afterEach(() => rmSync(root, { recursive: true, force: true }));

    const skill = (folder: string, description: string, body = ''): string => {
      mkdirSync(join(root, folder), { recursive: true });
      const path = join(root, folder, 'SKILL.md');
      writeFileSync(path, `---\nname: ${folder}\ndescription: ${description}\n---\n${body}`);
      return path;
    };

    it('uses the folder name, the files beside the skill and the other skills in its folder', () => {
      const path = skill('pdf-forms', 'x'.repeat(1000), 'See references/guide.md and scripts/fill.py.\n');
      mkdirSync(join(root, 'pdf-forms', 'references'));
      writeFileSync(join(root, 'pdf-forms', 'references', 'guide.md'), '# guide\n');
      for (let i = 0; i < 8; i++) skill(`other-${i}`, 'y'.repeat(1000));
      assert.deepEqual(
        lintSkillFile(path).map((f) => f.rule),
        ['description-budget', 'link-broken'],
      );
      // An unsaved editor buffer is linted as the file at that path.
      const renamed = lintSkillFile(path, `---\nname: other\ndescription: d\n---\n`);
      assert.deepEqual(
        renamed.map((f) => f.rule),
        ['name-folder', 'description-budget'],
      );
    });

    it('sums one line of status for lists', () => {
      const path = skill('pdf-forms', 'd', 'See references/a.md.\n');
      writeFileSync(path, '# no front matter\nSee references/a.md.\n');
      const status = lintStatus(lintSkillFile(path));
      assert.equal(status.errors, 1);
      assert.equal(status.warnings, 1);
      assert.match(status.first ?? '', /no front matter/);
      assert.deepEqual(lintStatus([]), { errors: 0, warnings: 0 });
    });
  });
});
