import assert from 'node:assert/strict';
import { applyEdits, type Edit } from '../../../src/engine/skill/applyEdits';
import { parseFrontMatter } from '../../../src/engine/skill/frontMatter';
import { frontMatterBreak, keepFrontMatter } from '../../../src/engine/skill/frontMatterGuard';
import { DEFAULT_PACKAGE_POLICY } from '../../../src/engine/skill/package/policy';
import { joinPackage } from '../../../src/engine/skill/package/text';

const SKILL = [
  '---',
  'name: docvqa-answers',
  'description: Answer questions about scanned documents with the exact text span.',
  '---',
  '# DocVQA Skill',
  '',
  '- Read the document carefully before answering.',
  '',
].join('\n');

function applied(edit: Edit, skill = SKILL): { text: string; status: string; error?: string } {
  const { text, report } = applyEdits(skill, [edit]);
  return { text, status: report[0]!.status, ...(report[0]!.error ? { error: report[0]!.error } : {}) };
}

describe('the SKILL.md front matter the agent hosts read survives optimizer edits', () => {
  it('refuses an edit that renames the skill, naming the rule, and leaves the text as it was', () => {
    const out = applied({ op: 'replace', target: 'name: docvqa-answers', content: 'name: document-answers' });
    assert.equal(out.status, 'skipped_front_matter');
    assert.equal(out.text, SKILL);
    assert.match(out.error ?? '', /changes the front-matter name "docvqa-answers".*folder name/);
  });

  it('refuses an edit that removes the front matter, its description, or makes the description too long', () => {
    assert.equal(
      applied({ op: 'delete', target: '---\nname: docvqa-answers' }).status,
      'skipped_front_matter',
    );
    const dropped = applied({
      op: 'delete',
      target: 'description: Answer questions about scanned documents with the exact text span.',
    });
    assert.equal(dropped.status, 'skipped_front_matter');
    assert.match(dropped.error ?? '', /removes the front-matter description/);
    const long = applied({
      op: 'replace',
      target: 'with the exact text span.',
      content: `with the exact text span. ${'Use it for forms. '.repeat(70)}`,
    });
    assert.equal(long.status, 'skipped_front_matter');
    assert.match(long.error ?? '', /description 1\d{3} characters, over the hosts' 1024/);
    // A description already over the limit may be shortened, not lengthened.
    const tooLong = SKILL.replace('text span.', `text span. ${'Use it for forms. '.repeat(70)}`);
    const shorter = { op: 'replace', target: 'span. Use it for forms. Use', content: 'span. Use' };
    assert.equal(applied(shorter, tooLong).status, 'applied_replace');
    const longer = {
      op: 'replace',
      target: 'span. Use it for forms.',
      content: 'span. Use it for all forms.',
    };
    assert.equal(applied(longer, tooLong).status, 'skipped_front_matter');
  });

  it('applies body edits and description edits within the limits', () => {
    const body = applied({ op: 'append', content: '- Copy numbers exactly.' });
    assert.equal(body.status, 'applied_append');
    const described = applied({
      op: 'replace',
      target: 'with the exact text span.',
      content: 'with the exact text span. Use for invoices and receipts.',
    });
    assert.equal(described.status, 'applied_replace');
    assert.equal(parseFrontMatter(described.text)?.name, 'docvqa-answers');
  });

  it('keeps a bare skill (the reference format) free to change, and guards only SKILL.md in a package', () => {
    const bare = '# Skill\n\n- Rule one.\n';
    assert.equal(frontMatterBreak(bare, '---\nname: x\n---\n# Skill\n'), undefined);
    const reference = '---\nname: table-notes\n---\n# Tables\n';
    const pkg = joinPackage({
      skill: SKILL,
      files: [{ path: 'references/tables.md', text: reference }],
      readOnly: [],
    });
    const { report } = applyEdits(
      pkg,
      [
        { op: 'replace', file: 'references/tables.md', target: 'name: table-notes', content: 'name: tables' },
        { op: 'replace', target: 'name: docvqa-answers', content: 'name: tables' },
      ],
      { packagePolicy: { ...DEFAULT_PACKAGE_POLICY, folder: true } },
    );
    assert.deepEqual(
      report.map((r) => r.status),
      ['applied_replace', 'skipped_front_matter'],
    );
  });

  it('puts the front matter back into a rewrite that dropped or renamed it, keeping the rewritten body', () => {
    const body = '# DocVQA Skill\n\n- Quote the exact span.\n';
    const dropped = keepFrontMatter(SKILL, body);
    assert.match(dropped.restored ?? '', /removes or breaks the SKILL.md front matter/);
    assert.equal(dropped.text, `${SKILL.split('\n').slice(0, 4).join('\n')}\n${body}`);
    const renamed = keepFrontMatter(SKILL, `---\nname: docs\ndescription: Other.\n---\n${body}`);
    assert.match(renamed.restored ?? '', /changes the front-matter name/);
    assert.equal(renamed.text, dropped.text);
    const fine = `---\nname: docvqa-answers\ndescription: Better.\n---\n${body}`;
    assert.deepEqual(keepFrontMatter(SKILL, fine), { text: fine });
  });
});
