/**
 * The engine adds empty blocks (the slow-update block, the skill-aware appendix) to the skill it
 * trains; the person's SKILL.md does not have them. A candidate that fills such a block would
 * then rewrite lines the document lacks and could not be shown. Against such a document the
 * review reads the previous skill without the empty blocks, so filling one is an insertion.
 */
import {
  APPENDIX_END,
  APPENDIX_HEADING,
  APPENDIX_START,
  SLOW_UPDATE_END,
  SLOW_UPDATE_START,
} from '../../engine/skill/document';

const EMPTY_BLOCKS: ReadonlyArray<{ start: string; text: string }> = [
  { start: SLOW_UPDATE_START, text: `${SLOW_UPDATE_START}\n${SLOW_UPDATE_END}` },
  { start: APPENDIX_START, text: `${APPENDIX_START}\n${APPENDIX_HEADING}\n${APPENDIX_END}` },
];

/** `previous` without the engine's empty blocks that `doc` does not have; unchanged otherwise. */
export function previousForDocument(previous: string, doc: string): string {
  let out = previous.replace(/\r\n/g, '\n');
  for (const b of EMPTY_BLOCKS) {
    if (doc.includes(b.start)) continue;
    const at = out.indexOf(`\n\n${b.text}\n`);
    if (at === -1) continue;
    out = `${out.slice(0, at)}\n${out.slice(at + b.text.length + 3)}`;
  }
  return out;
}
