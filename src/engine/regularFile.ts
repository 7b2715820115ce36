/** Reading a file the user named, refusing what is not a regular file (a FIFO, a device, a socket). */
import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from 'node:fs';

/** What a path that is not a regular file is, in words for a message. */
export function fileKind(st: Stats): string {
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * The bytes of `path`, or what it is when it is not a regular file. It is opened without blocking
 * and checked on the open handle, because reading a FIFO waits for a writer forever and a device
 * such as /dev/zero never ends (and its size reads as 0). `check` sees the file's stat before any
 * byte is read (a size limit). Errors of opening it (ENOENT, EACCES…) are thrown as they are.
 */
export function readRegularFile(
  path: string,
  check?: (st: Stats) => void,
): { bytes: Buffer } | { kind: string } {
  // O_NONBLOCK does not exist on Windows, where FIFOs are not files.
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { kind: fileKind(st) };
    check?.(st);
    return { bytes: readFileSync(fd) };
  } finally {
    closeSync(fd);
  }
}
