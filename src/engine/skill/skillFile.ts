import { statSync } from 'node:fs';
import { SkillOptError } from '../errors';
import { decodeUtf8 } from '../data/utf8';
import { readRegularFile } from '../regularFile';
import { isSkillFolder, readPackageFolder } from './package/folder';

/**
 * `env.skill_init`: a SKILL.md file (the single-file case, its text unchanged) or a skill folder
 * holding one (a package: SKILL.md plus its references/, scripts/ and assets/).
 */
export function readSkillInit(path: string, maxBytes: number): { text: string; notices: string[] } {
  if (isSkillFolder(path)) return readPackageFolder(path, (p) => readSkillText(p, maxBytes));
  const text = readSkillText(path, maxBytes);
  // Any text file reads; one that is not Markdown is more likely the wrong path than a skill, and
  // its text goes into every prompt and the run folder: said before anything is spent.
  const notices = /\.(md|markdown)$/i.test(path)
    ? []
    : [
        `env.skill_init: ${path} is not a Markdown (.md) file; its text is trained as the skill and sent in every target prompt. Point env.skill_init at the SKILL.md (or skill folder) you mean`,
      ];
  return { text, notices };
}

/**
 * The text of the skill to train, refused before anything is spent when it cannot be a Markdown
 * prompt: a folder, a FIFO or device, a binary file, a file that is not UTF-8, or one larger than `maxBytes`.
 */
export function readSkillText(path: string, maxBytes: number): string {
  const key = 'env.skill_init';
  const stat = statSync(path);
  if (stat.isDirectory()) {
    throw new SkillOptError('skill', 'the skill is a folder without a SKILL.md', {
      file: path,
      key,
      fix: 'point env.skill_init at a skill folder (one holding SKILL.md) or at a Markdown file',
    });
  }
  const read = readRegularFile(path, (st) => {
    if (st.size > maxBytes) {
      throw new SkillOptError(
        'skill',
        `the skill is ${st.size} bytes, over env.max_skill_bytes (${maxBytes})`,
        {
          file: path,
          key,
          fix: 'check that env.skill_init names the right file, or raise env.max_skill_bytes',
        },
      );
    }
  });
  if ('kind' in read) {
    throw new SkillOptError('skill', `the skill is ${read.kind}, not a regular file`, {
      file: path,
      key,
      fix: 'point env.skill_init at a Markdown (.md) file or a skill folder holding SKILL.md',
    });
  }
  const bytes = read.bytes;
  if (bytes.includes(0)) {
    throw new SkillOptError('skill', 'the skill is not a text file (it contains NUL bytes)', {
      file: path,
      key,
      fix: 'point env.skill_init at a Markdown (.md) file',
    });
  }
  const decoded = decodeUtf8(bytes);
  if ('badLine' in decoded) {
    throw new SkillOptError('skill', 'the skill is not UTF-8 text', {
      file: path,
      line: decoded.badLine,
      key,
      fix: 'save the file as UTF-8 (e.g. in VS Code: "Save with Encoding" → UTF-8)',
    });
  }
  // Same as reading with 'utf8': a byte-order mark is kept as part of the text.
  return decoded.text;
}
