import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  APPENDIX_END,
  APPENDIX_START,
  SLOW_UPDATE_END as E,
  SLOW_UPDATE_START as S,
  extractAppendixNotes,
  extractSlowUpdate,
  findProtectedRegions,
  injectEmptyAppendix,
  injectEmptySlowUpdate,
  mergeAppendixNotes,
  replaceAppendix,
  replaceSlowUpdate,
  skillHash,
} from '../../../src/engine/skill/document';

/** Indexed access that fails the test instead of yielding undefined. */
function at<T>(list: readonly T[], i: number): T {
  const v = list[i];
  if (v === undefined) throw new assert.AssertionError({ message: `no item at index ${i}` });
  return v;
}

const fixtures = join(__dirname, '..', '..', 'fixtures');
const TRAINED = ['alfworld', 'docvqa', 'livemath', 'officeqa', 'searchqa', 'spreadsheetbench'];

// Inputs and outputs generated with the reference's slow_update helpers (python3).
const SLOW_UPDATE_GOLDEN: Array<{ in: string; inject: string; extract: string; replace: string }> = [
  {
    in: '# T\n\nbody\n\n\n',
    inject: `# T\n\nbody\n\n${S}\n${E}\n`,
    extract: '',
    replace: `# T\n\nbody\n\n${S}\nnew\nguidance\n${E}\n`,
  },
  {
    in: `# T\n\nbody\n\n${S}\n  old guidance \n${E}\n`,
    inject: `# T\n\nbody\n\n${S}\n  old guidance \n${E}\n`,
    extract: 'old guidance',
    replace: `# T\n\nbody\n\n${S}\nnew\nguidance\n${E}\n`,
  },
  {
    in: `# T\n${S}\na\n${E}\nmiddle\n\n\n\nmore\n${S}\nb\n${E}\ntail  \n`,
    inject: `# T\n${S}\na\n${E}\nmiddle\n\n\n\nmore\n${S}\nb\n${E}\ntail  \n`,
    extract: 'a',
    replace: `# T\n\nmiddle\n\nmore\n\ntail\n\n${S}\nnew\nguidance\n${E}\n`,
  },
  {
    in: `# T\n${E}\nstray end\n${S}\norphan start no end\n`,
    inject: `# T\n${E}\nstray end\n${S}\norphan start no end\n`,
    extract: '',
    replace: `# T\n\nstray end\n\norphan start no end\n\n${S}\nnew\nguidance\n${E}\n`,
  },
  {
    in: `# T\n${E} before ${S}\n`,
    inject: `# T\n${E} before ${S}\n`,
    extract: '',
    replace: `# T\n before\n\n${S}\nnew\nguidance\n${E}\n`,
  },
  {
    in: '',
    inject: `\n\n${S}\n${E}\n`,
    extract: '',
    replace: `\n\n${S}\nnew\nguidance\n${E}\n`,
  },
];

describe('skill document helpers', () => {
  it('matches the reference slow-update helpers on golden inputs', () => {
    for (const g of SLOW_UPDATE_GOLDEN) {
      assert.equal(injectEmptySlowUpdate(g.in), g.inject, JSON.stringify(g.in));
      assert.equal(extractSlowUpdate(g.in), g.extract, JSON.stringify(g.in));
      assert.equal(replaceSlowUpdate(g.in, '  new\nguidance  '), g.replace, JSON.stringify(g.in));
    }
  });

  it('writes an empty block with a blank line between the markers, as the reference does', () => {
    assert.equal(replaceSlowUpdate('# T\n', '   '), `# T\n\n${S}\n\n${E}\n`);
  });

  it('removes every orphan start, not only the first', () => {
    const out = replaceSlowUpdate(`# T\n${S}\none\n${S}\ntwo\n`, 'g');
    assert.equal(out, `# T\n\none\n\ntwo\n\n${S}\ng\n${E}\n`);
    assert.equal(findProtectedRegions(out).length, 1);
  });

  it('round-trips the slow-update block of every trained skill', () => {
    for (const name of TRAINED) {
      const text = readFileSync(join(fixtures, 'skillopt-trained-skills', `${name}.md`), 'utf8');
      const region = at(findProtectedRegions(text), 0);
      assert.equal(extractSlowUpdate(text), text.slice(region.contentStart, region.contentEnd).trim(), name);
      assert.equal(injectEmptySlowUpdate(text), text, `${name}: already has a block`);
      const updated = replaceSlowUpdate(text, '- Re-read the question.');
      assert.equal(extractSlowUpdate(updated), '- Re-read the question.', name);
      assert.ok(updated.endsWith(`${S}\n- Re-read the question.\n${E}\n`), name);
      assert.equal(findProtectedRegions(updated).length, 1, name);
      // The body before the block is the trained body with runs of blank lines collapsed.
      const body = text
        .slice(0, text.indexOf(S))
        .replace(/\n{3,}/g, '\n\n')
        .trimEnd();
      assert.equal(updated.slice(0, updated.indexOf(S)), `${body}\n\n`, name);
    }
    const empty = ['docvqa', 'livemath', 'officeqa', 'searchqa'].map((n) =>
      extractSlowUpdate(readFileSync(join(fixtures, 'skillopt-trained-skills', `${n}.md`), 'utf8')),
    );
    assert.deepEqual(empty, ['', '', '', '']);
    const alf = readFileSync(join(fixtures, 'skillopt-trained-skills', 'alfworld.md'), 'utf8');
    assert.match(extractSlowUpdate(alf), /^Preserve the successful pattern: /);
  });

  it('hashes like the reference candidate_hash', () => {
    const c1 = readFileSync(
      join(fixtures, 'skillopt-python-run', 'steps', 'step_0001', 'candidate_skill.md'),
      'utf8',
    );
    const c2 = readFileSync(
      join(fixtures, 'skillopt-python-run', 'steps', 'step_0002', 'candidate_skill.md'),
      'utf8',
    );
    assert.equal(skillHash(c1), '03af9c0c6278970d');
    assert.equal(skillHash(c2), '88d746fb0dafa05b');
    assert.equal(skillHash(''), 'e3b0c44298fc1c14');
  });

  describe('appendix block', () => {
    it('injects an empty block with the heading, once', () => {
      const out = injectEmptyAppendix('# T\nbody\n\n');
      assert.equal(out, `# T\nbody\n\n${APPENDIX_START}\n## Execution Notes Appendix\n${APPENDIX_END}\n`);
      assert.equal(injectEmptyAppendix(out), out);
      assert.deepEqual(extractAppendixNotes(out), []);
    });

    it('renders notes as bullets in place, leaving the rest byte-identical', () => {
      const base = injectEmptySlowUpdate(injectEmptyAppendix('# T\nbody\n'));
      const out = replaceAppendix(base, ['Check units.', '  - Re-read\nthe question  ', '', `x${E}`]);
      assert.equal(
        out,
        `# T\nbody\n\n${APPENDIX_START}\n## Execution Notes Appendix\n- Check units.\n- Re-read the question\n- x\n${APPENDIX_END}\n\n${S}\n${E}\n`,
      );
      assert.deepEqual(extractAppendixNotes(out), ['Check units.', 'Re-read the question', 'x']);
      assert.equal(findProtectedRegions(out).length, 2);
    });

    it('rebuilds a damaged appendix at the end', () => {
      const out = replaceAppendix(`# T\n${APPENDIX_START}\nold\n${APPENDIX_START}\nmore\n`, ['n']);
      assert.equal(
        out,
        `# T\n\nold\n\nmore\n\n${APPENDIX_START}\n## Execution Notes Appendix\n- n\n${APPENDIX_END}\n`,
      );
    });

    it('joins wrapped lines to their bullet when reading notes', () => {
      const text = `${APPENDIX_START}\n## Execution Notes Appendix\n- first\n  continued\n* second\n${APPENDIX_END}`;
      assert.deepEqual(extractAppendixNotes(text), ['first continued', 'second']);
    });

    it('merges notes keeping order and dropping canonical duplicates', () => {
      assert.deepEqual(
        mergeAppendixNotes(['Check units.', 'Verify dates'], ['check   UNITS', 'verify dates;', 'New one']),
        ['Check units.', 'Verify dates', 'New one'],
      );
    });
  });
});
