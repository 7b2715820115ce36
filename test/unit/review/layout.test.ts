import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CandidateEdit } from '../../../src/protocol/events';
import { applyEdits, assignEditIds } from '../../../src/engine/skill/applyEdits';
import { injectEmptySlowUpdate } from '../../../src/engine/skill/document';
import { lineHunks } from '../../../src/engine/skill/hunks';
import {
  candidateChanges,
  hunkOwner,
  placeChanges,
  previousFromCandidate,
  splitHunk,
  traceChanges,
} from '../../../src/extension/review/layout';

const houseStyle = readFileSync(join(__dirname, '../../../examples/house-style/SKILL.md'), 'utf8');

/** Runs the engine's own edit application, so the tests see the hunks a real step produces. */
function candidateOf(
  skill: string,
  raw: Array<{ op: string; target?: string; content?: string }>,
): { edits: CandidateEdit[]; candidate: string } {
  const withIds = assignEditIds(raw.map((e) => ({ ...e })));
  const { text, report } = applyEdits(skill, withIds);
  const edits = withIds.map((e, i) => ({
    id: String(e.id),
    op: String(e.op),
    ...(e.target !== undefined ? { target: String(e.target) } : {}),
    ...(e.content !== undefined ? { content: String(e.content) } : {}),
    status: report[i]?.status ?? 'error',
  }));
  return { edits, candidate: text };
}

describe('review layout: splitting hunks by edit', () => {
  it('gives each of two appends in one hunk its own change, each with its blank line', () => {
    const skill = injectEmptySlowUpdate(houseStyle);
    const { edits, candidate } = candidateOf(skill, [
      { op: 'append', content: '- Money: $15.75.' },
      { op: 'append', content: '- Capitals: the seat of government.' },
    ]);
    const hunks = lineHunks(skill, candidate);
    assert.equal(hunks.length, 1, 'both appends land in one hunk');
    const changes = candidateChanges(skill, candidate, hunks, edits);
    assert.deepEqual(
      changes.map((c) => ({ owner: c.owner, removed: c.removed, added: c.added })),
      [
        { owner: edits[0]!.id, removed: [], added: ['- Money: $15.75.', ''] },
        { owner: edits[1]!.id, removed: [], added: ['- Capitals: the seat of government.', ''] },
      ],
    );
    // Both go after line 14 (1-based), the blank line before the slow-update block.
    assert.equal(changes[0]!.at, 14);
    assert.equal(changes[1]!.at, 14);
  });

  it('pairs a replace inside a line with the line it rewrites', () => {
    const { edits, candidate } = candidateOf(houseStyle, [
      { op: 'replace', target: 'with no explanation', content: 'with no explanation and no quotes' },
      { op: 'insert_after', target: '## Rules', content: '- Dates are YYYY-MM-DD.' },
    ]);
    const changes = candidateChanges(houseStyle, candidate, lineHunks(houseStyle, candidate), edits);
    const replace = changes.find((c) => c.owner === edits[0]!.id);
    const insert = changes.filter((c) => c.owner === edits[1]!.id);
    assert.deepEqual(replace, {
      owner: edits[0]!.id,
      at: 12,
      removed: ['- Give only the final answer, with no explanation.'],
      added: ['- Give only the final answer, with no explanation and no quotes.'],
    });
    assert.deepEqual(
      insert.map((c) => c.added),
      [['- Dates are YYYY-MM-DD.', '']],
    );
  });

  it('keeps both sides in order when a replace follows an insertion in one hunk', () => {
    const hunk = {
      id: 'h-x',
      oldStart: 3,
      oldLines: 1,
      newStart: 3,
      newLines: 2,
      removed: ['- old rule'],
      added: ['- brand new rule', '- new rule'],
    };
    const edits: CandidateEdit[] = [
      { id: 'e-rep', op: 'replace', target: '- old rule', content: '- new rule' },
      { id: 'e-ins', op: 'insert_after', target: '## Rules', content: '- brand new rule' },
    ];
    assert.deepEqual(splitHunk(hunk, edits), [
      { owner: 'e-ins', at: 2, removed: [], added: ['- brand new rule'] },
      { owner: 'e-rep', at: 2, removed: ['- old rule'], added: ['- new rule'] },
    ]);
  });

  it('gives lines no edit explains to the hunk itself (slow-update rewrites have no edits)', () => {
    const hunk = {
      id: 'h-slow',
      oldStart: 27,
      oldLines: 0,
      newStart: 28,
      newLines: 1,
      removed: [],
      added: ['- Check.'],
    };
    assert.deepEqual(splitHunk(hunk, []), [
      { owner: hunkOwner('h-slow'), at: 27, removed: [], added: ['- Check.'] },
    ]);
  });

  it('ignores skipped edits when attributing lines', () => {
    const hunk = {
      id: 'h-1',
      oldStart: 1,
      oldLines: 0,
      newStart: 2,
      newLines: 1,
      removed: [],
      added: ['- rule'],
    };
    const edits: CandidateEdit[] = [
      { id: 'e-skip', op: 'append', content: '- rule', status: 'skipped_ambiguous_target' },
      { id: 'e-ok', op: 'append', content: '- rule', status: 'applied_append' },
    ];
    assert.equal(splitHunk(hunk, edits)[0]!.owner, 'e-ok');
  });
});

describe('review layout: previous text and placement', () => {
  it('rebuilds the previous text from the candidate and its hunks', () => {
    const { candidate } = candidateOf(houseStyle, [
      { op: 'insert_after', target: '## Rules', content: '- A.' },
      { op: 'replace', target: 'final answer', content: 'final answer only' },
      { op: 'append', content: '- B.' },
    ]);
    assert.equal(previousFromCandidate(candidate, lineHunks(houseStyle, candidate)), houseStyle);
  });

  it('places changes by offset when the person added lines above them', () => {
    const previous = 'a\nb\nc\nd\n';
    const changes = [{ owner: 'e1', at: 2, removed: ['c'], added: ['C'] }];
    const doc = 'intro\nmore\na\nb\nc\nd\n';
    assert.deepEqual(placeChanges(previous, doc, changes), {
      placed: [{ owner: 'e1', at: 2, removed: ['c'], added: ['C'], docAt: 4 }],
      conflicts: [],
    });
  });

  it('reports a change as a conflict when the person rewrote its lines', () => {
    const previous = 'a\nb\nc\nd\n';
    const changes = [
      { owner: 'e1', at: 2, removed: ['c'], added: ['C'] },
      { owner: 'e2', at: 4, removed: [], added: ['e'] },
    ];
    const doc = 'a\nb\nc (mine)\nd\n';
    const { placed, conflicts } = placeChanges(previous, doc, changes);
    assert.deepEqual(
      conflicts.map((c) => c.owner),
      ['e1'],
    );
    assert.deepEqual(
      placed.map((c) => [c.owner, c.docAt]),
      [['e2', 4]],
    );
  });

  it('places an insertion after lines the document lacks at the end (missing slow-update block)', () => {
    const previous = 'x\ny\n\n<!-- SLOW_UPDATE_START -->\n<!-- SLOW_UPDATE_END -->\n';
    const doc = 'x\ny\n';
    const changes = [{ owner: 'e1', at: 2, removed: [], added: ['z', ''] }];
    assert.deepEqual(placeChanges(previous, doc, changes).placed[0]?.docAt, 2);
  });
});

describe('review layout: tracing edits one by one', () => {
  it('attributes lines by replaying each edit, even where one diff would pair them wrongly', () => {
    const { edits, candidate } = candidateOf(houseStyle, [
      { op: 'insert_after', target: '## Rules', content: '- Write dates as YYYY-MM-DD.' },
      { op: 'replace', target: 'with no explanation', content: 'with no explanation and no quotes' },
    ]);
    const traced = traceChanges(houseStyle, candidate, edits);
    assert.deepEqual(
      traced?.map((c) => [c.owner, c.at, c.removed, c.added]),
      [
        [edits[0]!.id, 12, [], ['- Write dates as YYYY-MM-DD.', '']],
        [
          edits[1]!.id,
          12,
          ['- Give only the final answer, with no explanation.'],
          ['- Give only the final answer, with no explanation and no quotes.'],
        ],
      ],
    );
  });

  it("traces SKILL.md's edits of a skill folder's candidate, leaving out the edits of its other files", () => {
    const { edits, candidate } = candidateOf(houseStyle, [{ op: 'append', content: '- Say yes.' }]);
    const withFile: CandidateEdit[] = [
      {
        id: 'ref',
        op: 'append',
        content: '- In the reference.',
        file: 'references/units.md',
        status: 'applied_append',
      },
      ...edits,
    ];
    const traced = traceChanges(houseStyle, candidate, withFile);
    assert.deepEqual(
      traced?.map((c) => [c.owner, c.added]),
      [[edits[0]!.id, ['', '- Say yes.']]],
    );
  });

  it('gives up (and the hunks are split instead) when an edit rewrites what another added', () => {
    const { edits, candidate } = candidateOf(houseStyle, [
      { op: 'append', content: '- Say yes.' },
      { op: 'replace', target: '- Say yes.', content: '- Say yes, politely.' },
    ]);
    assert.equal(traceChanges(houseStyle, candidate, edits), undefined);
    const changes = candidateChanges(houseStyle, candidate, lineHunks(houseStyle, candidate), edits);
    assert.ok(changes.length > 0);
    assert.ok(changes.every((c) => edits.some((e) => e.id === c.owner) || c.owner.startsWith('hunk:')));
  });
});
