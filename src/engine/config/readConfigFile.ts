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
  try {
    const read = readRegularFile(abs);
    if (!('kind' in read)) return read.bytes.toString('utf8');
    kind = read.kind;
    code = `it is ${kind}`;
  } catch (err) {
    code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    if (code === 'EISDIR') kind = 'a folder';
  }
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
