import { statSync } from 'node:fs';
import { basename, extname } from 'node:path';
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
  const base = basename(path).toLowerCase();
  // A dot file (`.env`) has no extension to Node; its whole name is one.
  const ext = extname(base) || (base.startsWith('.') ? base : '');
  // A config, task, data or code file is the wrong path, never a skill: its text would be trained
  // and sent in every target prompt (a `.env`, a key file). Refused before anything is read.
  if (NOT_SKILL_EXTENSIONS.has(ext)) {
    throw new SkillOptError('skill', `the skill is a ${ext} file, not Markdown`, {
      file: path,
      key: 'env.skill_init',
      fix: 'point env.skill_init at the SKILL.md (or skill folder) you mean; to train this text anyway, save it as a .md file',
    });
  }
  const text = readSkillText(path, maxBytes);
  // Other text reads (a .txt prompt, a file without extension), with a notice: more likely the wrong
  // path than a skill, and its text goes into every prompt and the run folder.
  const notices = MARKDOWN_EXTENSIONS.has(ext)
    ? []
    : [
        `env.skill_init: ${path} is not a Markdown (.md) file; its text is trained as the skill and sent in every target prompt. Point env.skill_init at the SKILL.md (or skill folder) you mean`,
      ];
  return { text, notices };
}

const MARKDOWN_EXTENSIONS = new Set(['.md', '.markdown']);

/** Extensions of files that are data, config or code: never the text of a skill. */
const NOT_SKILL_EXTENSIONS = new Set(
  (
    '.json .jsonl .ndjson .yaml .yml .toml .ini .cfg .conf .env .csv .tsv .xml .parquet .sqlite .db ' +
    '.py .js .mjs .cjs .ts .tsx .jsx .sh .bash .ps1 .bat .rb .go .rs .java .c .h .cpp .cs .php ' +
    '.pem .key .crt .p12 .pdf .docx .xlsx .zip .gz .tar .png .jpg .jpeg .gif .webp'
  ).split(' '),
);

/**
 * The text of the skill to train, refused before anything is spent when it cannot be a Markdown
 * prompt: a folder, a FIFO or device, a binary file, a file that is not UTF-8, or one larger than `maxBytes`.
 */
export function readSkillText(
  path: string,
  maxBytes: number,
  /** Where the path was given, named by the messages: the config key, eval's flag, or VS Code's command. */
  key: 'env.skill_init' | '--skill' | 'the Evaluate command' = 'env.skill_init',
): string {
  const stat = statSync(path);
  if (stat.isDirectory()) {
    throw new SkillOptError('skill', 'the skill is a folder without a SKILL.md', {
      file: path,
      key,
      fix: `point ${key} at a skill folder (one holding SKILL.md) or at a Markdown file`,
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
          fix: `check that ${key} names the right file, or raise env.max_skill_bytes`,
        },
      );
    }
  });
  if ('kind' in read) {
    throw new SkillOptError('skill', `the skill is ${read.kind}, not a regular file`, {
      file: path,
      key,
      fix: `point ${key} at a Markdown (.md) file or a skill folder holding SKILL.md`,
    });
  }
  const bytes = read.bytes;
  if (bytes.includes(0)) {
    throw new SkillOptError('skill', 'the skill is not a text file (it contains NUL bytes)', {
      file: path,
      key,
      fix: `point ${key} at a Markdown (.md) file`,
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
