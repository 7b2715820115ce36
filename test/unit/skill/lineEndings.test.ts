import assert from 'node:assert/strict';
import { applyEdits, summarizeReport } from '../../../src/engine/skill/applyEdits';
import {
  extractAppendixNotes,
  extractSlowUpdate,
  injectEmptyAppendix,
  injectEmptySlowUpdate,
  replaceAppendix,
  replaceSlowUpdate,
} from '../../../src/engine/skill/document';
import { withDescription } from '../../../src/engine/skill/description';
import { parseFrontMatter } from '../../../src/engine/skill/frontMatter';
import { usesCrlf } from '../../../src/engine/skill/lineEndings';
import { joinPackage, splitPackage } from '../../../src/engine/skill/package/text';

const crlf = (s: string): string => s.replace(/\n/g, '\r\n');
const SKILL =
  '---\nname: house-style\ndescription: Formats dates.\n---\n\n# House style\n\nSee the guide.\n\n## Rules\n- Rule one.\n';

describe('skill files with Windows line endings (CRLF)', () => {
  it('binds a multi-line anchor written with \\n and keeps the file CRLF throughout', () => {
    const { text, report } = applyEdits(crlf(SKILL), [
      {
        op: 'replace',
        target: '# House style\n\nSee the guide.',
        content: '# House style\n\nSee the units guide.',
      },
      { op: 'insert_after', target: '## Rules', content: '- Rule zero.\n- Rule half.' },
      { op: 'append', content: '## Examples\n- 2027-01-17' },
    ]);
    assert.deepEqual(
      report.map((r) => r.status),
      ['applied_replace', 'applied_insert_after', 'applied_append'],
    );
    assert.equal(
      text,
      crlf(
        '---\nname: house-style\ndescription: Formats dates.\n---\n\n# House style\n\nSee the units guide.\n\n## Rules\n\n- Rule zero.\n- Rule half.\n- Rule one.\n\n## Examples\n- 2027-01-17\n',
      ),
    );
    assert.ok(usesCrlf(text));
  });

  it('gives the same result as the \\n file, only with CRLF', () => {
    const edits = [
      { op: 'delete', target: 'See the guide.\n\n' },
      { op: 'replace', target: '- Rule one.\n', content: '- Rule one, revised.' },
    ];
    const lf = applyEdits(SKILL, edits);
    const windows = applyEdits(crlf(SKILL), edits);
    assert.equal(windows.text, crlf(lf.text));
    assert.deepEqual(windows.report, lf.report);
  });

  it('edits each file of a skill folder in its own line endings', () => {
    const text = joinPackage({
      skill: crlf(SKILL),
      files: [{ path: 'references/guide.md', text: '# Guide\nDates: YYYY-MM-DD.\nMoney: $1.00.\n' }],
      readOnly: [],
    });
    const out = applyEdits(text, [
      { op: 'replace', target: '## Rules\n- Rule one.', content: '## Rules\n- Rule one.\n- Rule two.' },
      {
        op: 'replace',
        file: 'references/guide.md',
        target: 'Dates: YYYY-MM-DD.\nMoney',
        content: 'Dates: ISO.\nMoney',
      },
    ]);
    assert.equal(summarizeReport(out.report).applied, 2);
    const pkg = splitPackage(out.text);
    assert.ok(usesCrlf(pkg.skill));
    assert.ok(pkg.skill.endsWith('- Rule one.\r\n- Rule two.\r\n'));
    assert.equal(pkg.files[0]?.text, '# Guide\nDates: ISO.\nMoney: $1.00.\n');
  });

  it('leaves a file with mixed line endings as it is (an anchor binds only where its bytes match)', () => {
    const mixed = '# A\r\nB\nC\r\n';
    assert.equal(usesCrlf(mixed), false);
    const { report } = applyEdits(mixed, [{ op: 'replace', target: 'A\nB', content: 'X' }]);
    assert.equal(report[0]?.status, 'skipped_replace_target_not_found');
    assert.equal(applyEdits(mixed, [{ op: 'replace', target: 'B\nC', content: 'X' }]).text, '# A\r\nX\r\n');
  });
});

describe('the description the activation track writes into a CRLF SKILL.md', () => {
  it('keeps every line CRLF, the byte-order mark, a folded style and the other keys', () => {
    const skill =
      '\uFEFF---\r\nname: x\r\ndescription: >\r\n  Folded one\r\n  two.\r\nlicense: MIT # keep\r\n---\r\n# X\r\n';
    const out = withDescription(skill, 'Formats dates: ISO.');
    assert.equal(
      out,
      '\uFEFF---\r\nname: x\r\ndescription: >-\r\n  Formats dates: ISO.\r\nlicense: MIT # keep\r\n---\r\n# X\r\n',
    );
    assert.equal(parseFrontMatter(out)?.description, 'Formats dates: ISO.');
  });
});

describe('blocks the loop adds to a CRLF SKILL.md', () => {
  it('writes the slow-update block and the appendix with CRLF, in a folder skill too', () => {
    const withBlock = replaceSlowUpdate(crlf(SKILL), 'Prefer ISO dates.\nCheck the units.');
    assert.ok(usesCrlf(withBlock), JSON.stringify(withBlock));
    assert.equal(extractSlowUpdate(withBlock), 'Prefer ISO dates.\r\nCheck the units.');
    const appendix = replaceAppendix(injectEmptyAppendix(crlf(SKILL)), ['Check the units.']);
    assert.ok(usesCrlf(appendix), JSON.stringify(appendix));
    assert.deepEqual(extractAppendixNotes(appendix), ['Check the units.']);
    const pkg = joinPackage({
      skill: crlf(SKILL),
      files: [{ path: 'references/a.md', text: 'A\n' }],
      readOnly: [],
    });
    const out = splitPackage(injectEmptySlowUpdate(pkg));
    assert.ok(usesCrlf(out.skill));
    assert.equal(out.files[0]?.text, 'A\n');
  });
});
