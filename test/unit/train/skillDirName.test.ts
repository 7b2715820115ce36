import { strict as assert } from 'node:assert';
import { skillDirName } from '../../../src/engine/train/rolloutItem';

describe('skillDirName', () => {
  it("is each skill's own front-matter name, asked again and in turn", () => {
    const a = '---\nname: house-style\ndescription: x\n---\n# A\n';
    const b = '---\nname: other_skill\n---\n# B\n';
    assert.equal(skillDirName(a), 'house-style');
    assert.equal(skillDirName(a), 'house-style');
    assert.equal(skillDirName(b), 'other_skill');
    assert.equal(skillDirName('# no front matter\n'), 'skill');
    assert.equal(skillDirName('---\nname: ../escape\n---\n'), 'skill');
    assert.equal(skillDirName(a), 'house-style');
  });
});
