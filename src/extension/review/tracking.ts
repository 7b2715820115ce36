/**
 * Keeps line blocks in step with a document the person is typing in. A block either moves with
 * the text above it, grows or shrinks when the person types inside it, or is lost when an edit
 * crosses its edge (the review can no longer say which lines are the edit's). Pure, no `vscode`.
 */

/** A text change in the shape of `vscode.TextDocumentContentChangeEvent`, positions 0-based. */
export interface TextChange {
  startLine: number;
  startChar: number;
  endLine: number;
  endChar: number;
  text: string;
}

/** `length` 0 is an anchor: the point just before line `start`. */
export interface LineBlock {
  start: number;
  length: number;
}

export type BlockFate = { kind: 'keep'; block: LineBlock } | { kind: 'consumed' } | { kind: 'touched' };

function newlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

export function lineDelta(change: TextChange): number {
  return newlines(change.text) - (change.endLine - change.startLine);
}

/** Replacing whole lines (or inserting whole lines): the line structure on either side survives. */
function wholeLines(change: TextChange): boolean {
  return change.startChar === 0 && (change.text === '' || change.text.endsWith('\n'));
}

function shiftAnchor(at: number, change: TextChange): BlockFate {
  const keep = (start: number): BlockFate => ({ kind: 'keep', block: { start, length: 0 } });
  if (change.endLine < at) return keep(at + lineDelta(change));
  if (change.endLine === at && change.endChar === 0) {
    if (change.startLine === at) return change.text.endsWith('\n') ? keep(at + lineDelta(change)) : keep(at);
    return wholeLines(change) ? keep(at + lineDelta(change)) : { kind: 'touched' };
  }
  if (change.startLine >= at) return keep(at);
  return { kind: 'touched' };
}

/** What one content change does to one block. */
export function shiftBlock(block: LineBlock, change: TextChange): BlockFate {
  if (block.length === 0) return shiftAnchor(block.start, change);
  const bs = block.start;
  const be = block.start + block.length;
  const delta = lineDelta(change);
  // Entirely below the block.
  if (change.startLine >= be) return { kind: 'keep', block };
  // Entirely above it, leaving its first line intact.
  if (change.endLine < bs || (change.endLine === bs && change.endChar === 0 && wholeLines(change))) {
    return { kind: 'keep', block: { start: bs + delta, length: block.length } };
  }
  const startsAtOrBefore = change.startLine < bs || (change.startLine === bs && change.startChar === 0);
  if (startsAtOrBefore && change.endLine >= be) return { kind: 'consumed' };
  const startsInside = change.startLine >= bs;
  const endsInside =
    change.endLine < be || (change.endLine === be && change.endChar === 0 && wholeLines(change));
  if (startsInside && endsInside) {
    const length = block.length + delta;
    return length > 0 ? { kind: 'keep', block: { start: bs, length } } : { kind: 'consumed' };
  }
  return { kind: 'touched' };
}
