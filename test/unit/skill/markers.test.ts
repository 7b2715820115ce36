import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';
import {
  APPENDIX_END,
  APPENDIX_START,
  SLOW_UPDATE_END,
  SLOW_UPDATE_START,
  checkSkillMarkers,
  findProtectedRegions,
  pyRstrip,
  pyStrip,
  scanMarkers,
  stripMarkers,
} from '../../../src/engine/skill/markers';

/** Indexed access that fails the test instead of yielding undefined. */
function at<T>(list: readonly T[], i: number): T {
  const v = list[i];
  if (v === undefined) throw new assert.AssertionError({ message: `no item at index ${i}` });
  return v;
}

const trainedDir = join(__dirname, '..', '..', 'fixtures', 'skillopt-trained-skills');
const TRAINED = ['alfworld', 'docvqa', 'livemath', 'officeqa', 'searchqa', 'spreadsheetbench'];

function expectSkillError(fn: () => unknown, line: number, pattern: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(SkillOptError.is(err, 'skill'), 'expected a skill error');
    assert.equal(err.place.line, line);
    assert.equal(err.place.file, 'SKILL.md');
    assert.ok(err.place.fix, 'a fix is given');
    assert.match(err.problem, pattern);
    assert.match(err.message, new RegExp(`^SKILL\\.md:${line}: `));
    return true;
  });
}

describe('skill markers', () => {
  it('uses the exact marker strings of the reference format', () => {
    assert.equal(SLOW_UPDATE_START, '<!-- SLOW_UPDATE_START -->');
    assert.equal(SLOW_UPDATE_END, '<!-- SLOW_UPDATE_END -->');
    assert.equal(APPENDIX_START, '<!-- APPENDIX_START -->');
    assert.equal(APPENDIX_END, '<!-- APPENDIX_END -->');
  });

  it('finds both kinds of region with offsets and 0-based lines', () => {
    const text = `# T\nbody\n${APPENDIX_START}\n## Execution Notes Appendix\n- n\n${APPENDIX_END}\n\n${SLOW_UPDATE_START}\nG\n${SLOW_UPDATE_END}\n`;
    const regions = findProtectedRegions(text);
    assert.equal(regions.length, 2);
    const app = at(regions, 0);
    const slow = at(regions, 1);
    assert.equal(app.kind, 'appendix');
    assert.equal(app.start, text.indexOf(APPENDIX_START));
    assert.equal(app.contentStart, app.start + APPENDIX_START.length);
    assert.equal(app.contentEnd, text.indexOf(APPENDIX_END));
    assert.equal(app.end, app.contentEnd + APPENDIX_END.length);
    assert.equal(app.startLine, 2);
    assert.equal(app.endLine, 5);
    assert.equal(slow.kind, 'slow_update');
    assert.equal(slow.startLine, 7);
    assert.equal(slow.endLine, 9);
    assert.equal(text.slice(slow.contentStart, slow.contentEnd), '\nG\n');
  });

  it('returns no region for unpaired markers and never throws', () => {
    assert.deepEqual(findProtectedRegions('plain text'), []);
    assert.deepEqual(findProtectedRegions(`a\n${SLOW_UPDATE_START}\nno end`), []);
    assert.deepEqual(findProtectedRegions(`a\n${SLOW_UPDATE_END}\n${SLOW_UPDATE_START}`), []);
  });

  it('finds markers in one pass, ignoring look-alikes', () => {
    const hits = scanMarkers(`<!-- x --> <!-- SLOW_UPDATE_STAR --> ${SLOW_UPDATE_START}${APPENDIX_END}`);
    assert.deepEqual(
      hits.map((h) => [h.kind, h.role]),
      [
        ['slow_update', 'start'],
        ['appendix', 'end'],
      ],
    );
  });

  it('reports each of the six trained skills as clean with one slow-update block ending the file', () => {
    // 0-based [startLine, endLine]; alfworld and spreadsheetbench carry guidance inside the block.
    const expected: Record<string, [number, number]> = {
      alfworld: [96, 112],
      docvqa: [24, 25],
      livemath: [33, 34],
      officeqa: [48, 49],
      searchqa: [69, 70],
      spreadsheetbench: [104, 132],
    };
    for (const name of TRAINED) {
      const text = readFileSync(join(trainedDir, `${name}.md`), 'utf8');
      const regions = checkSkillMarkers(text, `${name}.md`);
      assert.equal(regions.length, 1, name);
      assert.equal(at(regions, 0).kind, 'slow_update');
      assert.equal(at(regions, 0).end, text.trimEnd().length, `${name}: block ends the file`);
      assert.deepEqual([at(regions, 0).startLine, at(regions, 0).endLine], expected[name], name);
    }
  });

  it('rejects a second start marker of one kind, naming its line', () => {
    const text = `# T\n${SLOW_UPDATE_START}\n${SLOW_UPDATE_END}\nx\n${SLOW_UPDATE_START}\n${SLOW_UPDATE_END}\n`;
    expectSkillError(
      () => checkSkillMarkers(text, 'SKILL.md'),
      5,
      /second <!-- SLOW_UPDATE_START -->.*line 2/,
    );
  });

  it('rejects a start without an end', () => {
    expectSkillError(
      () => checkSkillMarkers(`# T\n\n${APPENDIX_START}\n- n\n`, 'SKILL.md'),
      3,
      /never closed/,
    );
  });

  it('rejects an end before its start', () => {
    const text = `# T\n${SLOW_UPDATE_END}\n${SLOW_UPDATE_START}\n`;
    expectSkillError(
      () => checkSkillMarkers(text, 'SKILL.md'),
      2,
      /has no <!-- SLOW_UPDATE_START --> before it/,
    );
  });

  it('rejects overlapping regions', () => {
    const text = `# T\n${SLOW_UPDATE_START}\na\n${APPENDIX_START}\nb\n${SLOW_UPDATE_END}\n${APPENDIX_END}\n`;
    expectSkillError(
      () => checkSkillMarkers(text, 'SKILL.md'),
      4,
      /inside the slow-update block opened on line 2/,
    );
  });

  it('accepts a skill without markers', () => {
    assert.deepEqual(checkSkillMarkers('# Just text\n'), []);
  });

  it('strips all four markers, including ones formed by stripping', () => {
    assert.equal(
      stripMarkers(`a${SLOW_UPDATE_START}b${APPENDIX_END}c${APPENDIX_START}${SLOW_UPDATE_END}`),
      'abc',
    );
    assert.equal(stripMarkers(`<!-- SLOW_${APPENDIX_END}UPDATE_START -->x`), 'x');
  });

  it("trims with Python's whitespace set", () => {
    assert.equal(pyStrip('\u001c\u0085 a b \t\u3000'), 'a b');
    assert.equal(pyStrip('\ufeffa'), '\ufeffa');
    assert.equal(pyRstrip('  a \n\n'), '  a');
    assert.equal(pyStrip(' \n '), '');
  });
});
