import assert from 'node:assert/strict';
import { parseFrontMatter } from '../../../src/engine/skill/frontMatter';

describe('SKILL.md front matter', () => {
  it('reads name, description, where each key is written, and the body', () => {
    const fm = parseFrontMatter('---\nname: pdf-forms\ndescription: >-\n  Fill PDF forms.\n---\n# Body\n');
    assert.ok(fm);
    assert.equal(fm.name, 'pdf-forms');
    assert.equal(fm.description, 'Fill PDF forms.');
    assert.deepEqual(fm.keyLines, { name: 1, description: 2 });
    assert.equal(fm.endLine, 4);
    assert.equal(fm.body, '# Body\n');
    assert.deepEqual(fm.errors, []);
  });

  it('is undefined without a leading block or without its closing line', () => {
    assert.equal(parseFrontMatter('# Title\n---\nname: x\n---\n'), undefined);
    assert.equal(parseFrontMatter('---\nname: x\n# no end\n'), undefined);
  });

  it('reports YAML errors at their file line and keeps no half-parsed data', () => {
    const fm = parseFrontMatter('---\nname: a\ndescription: "open\n---\nbody');
    assert.ok(fm);
    assert.ok(fm.errors.length > 0);
    assert.ok(fm.errors.every((e) => e.line >= 1 && e.line <= 3));
    assert.deepEqual(fm.data, {});
  });

  it('accepts CRLF files and a byte-order mark', () => {
    const fm = parseFrontMatter('\uFEFF---\r\nname: x\r\n---\r\nbody');
    assert.equal(fm?.name, 'x');
  });
});
