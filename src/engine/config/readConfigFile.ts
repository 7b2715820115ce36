import { decodeUtf8 } from '../data/utf8';
import { SkillOptError } from '../errors';
import { readRegularFile } from '../regularFile';
import type { ConfigOrigin } from './schema/problems';

/**
 * The text of a config file (`display` as the user wrote it; `via` the `_base_` entry naming a base
 * config). A folder, a FIFO or a device is refused, not read: the last two would hang the load.
 */
export function readConfigText(abs: string, display: string, via: ConfigOrigin | undefined): string {
  let code: string;
  /** What it is when it is no regular file ("a folder", "a FIFO (named pipe)"). */
  let kind: string | undefined;
  let bytes: Buffer | undefined;
  try {
    const read = readRegularFile(abs);
    if (!('kind' in read)) bytes = read.bytes;
    else kind = read.kind;
    code = `it is ${kind}`;
  } catch (err) {
    code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    if (code === 'EISDIR') kind = 'a folder';
  }
  // Outside the try: a decoding error is the user's message as it stands.
  if (bytes) return decodeConfig(bytes, display);
  if (via) {
    throw new SkillOptError(
      'config',
      code === 'ENOENT'
        ? `base config not found: ${display}`
        : `cannot read base config ${display} (${code})`,
      {
        file: via.file,
        line: via.line,
        key: '_base_',
        fix: 'correct the _base_ path; it is relative to the file that names it',
      },
    );
  }
  throw new SkillOptError(
    'config',
    code === 'ENOENT'
      ? 'config file not found'
      : kind
        ? `is ${kind}, not a config file`
        : `cannot read config file (${code})`,
    {
      file: display,
      fix: kind ? 'give the YAML config file itself (e.g. skillopt.yaml)' : 'check the config path',
    },
  );
}

const UTF8_FIX =
  'save it as UTF-8 (in VS Code: "Save with Encoding" → UTF-8; in PowerShell: Out-File -Encoding utf8)';

/**
 * A config's bytes as UTF-8 text. Lenient decoding would read a UTF-16 file (what Windows
 * PowerShell's `>` writes) as one garbled scalar and a Latin-1 value as U+FFFD, silently.
 */
function decodeConfig(bytes: Buffer, display: string): string {
  const b0 = bytes[0];
  const b1 = bytes[1];
  if ((b0 === 0xff && b1 === 0xfe) || (b0 === 0xfe && b1 === 0xff)) {
    throw new SkillOptError('config', 'the config file is UTF-16 text, not UTF-8', {
      file: display,
      fix: UTF8_FIX,
    });
  }
  const decoded = decodeUtf8(bytes);
  if ('text' in decoded) return decoded.text;
  throw new SkillOptError('config', 'the config file is not valid UTF-8 text', {
    file: display,
    line: decoded.badLine,
    fix: UTF8_FIX,
  });
}
