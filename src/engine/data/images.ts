/**
 * Images a task shows the target (DocVQA's page images): found and size-checked when the tasks are
 * loaded, so a missing or oversized file stops the run before anything is paid for; read as base64
 * only when a request is built.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { SkillOptError, type ErrorPlace } from '../errors';
import { findContained } from './containedFile';

/** What both the OpenAI and the Anthropic APIs take as image input. */
export const IMAGE_MEDIA_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
};

/** OpenAI's per-image limit; Anthropic's is lower (ANTHROPIC_MAX_IMAGE_BYTES, checked per target). */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
export const ANTHROPIC_MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** One image as a request carries it. */
export interface ImageInput {
  mediaType: string;
  /** Base64 of the file's bytes. */
  data: string;
  /** OpenAI's `detail` (`low`, `high`); absent = the server's default (the reference's `auto`). */
  detail?: string;
  /** The file name, for transcripts (never the bytes). */
  name: string;
}

/**
 * The image files a task field names, as absolute paths. A relative path is looked up next to the
 * task file first, then in `dirs` (the config's folder and the working folder, where the reference's
 * `data/docvqa_images/…` paths point); any path must lead to a file inside one of these folders.
 */
export function taskImages(
  value: unknown,
  taskId: string,
  taskFile: string,
  dirs: readonly string[],
  place: ErrorPlace,
): string[] {
  const paths = Array.isArray(value) ? value : [value];
  return paths.map((p) => {
    if (typeof p !== 'string' || p.trim() === '') {
      throw new SkillOptError('tasks', `Task "${taskId}" has an image entry that is not a file path`, {
        ...place,
        fix: 'write image_path as a path such as "images/page1.png" (or a list of such paths)',
      });
    }
    return checkImage(p.trim(), taskId, [dirname(taskFile), ...dirs], place);
  });
}

function checkImage(path: string, taskId: string, dirs: readonly string[], place: ErrorPlace): string {
  const roots = [...new Set(dirs.map((d) => resolve(d)))];
  const lookup = findContained(path, roots, roots);
  if ('outside' in lookup) {
    // Only pictures are sent, but they are the user's: a task file may not pick any on the disk.
    throw new SkillOptError(
      'tasks',
      `Task "${taskId}" names image "${path}", which ${lookup.outside === 'link' ? 'is a symbolic link leading' : 'lies'} outside the task file's folder, the config's folder and the working folder`,
      {
        ...place,
        fix: `move the image under ${roots.join(' or ')} and name it relative to that folder`,
      },
    );
  }
  if ('notFile' in lookup) {
    throw new SkillOptError(
      'tasks',
      `Task "${taskId}" names image "${path}", which is ${lookup.kind}, not a regular file`,
      {
        ...place,
        fix: `put the image file at ${lookup.notFile}, or correct the path in the task`,
      },
    );
  }
  if ('missing' in lookup) {
    throw new SkillOptError('tasks', `Task "${taskId}" names image "${path}", which does not exist`, {
      ...place,
      fix: `put the image at ${lookup.missing.join(' or ')}, or correct the path in the task`,
    });
  }
  const found = lookup.found;
  const type = IMAGE_MEDIA_TYPES[extname(found).toLowerCase()];
  if (!type) {
    throw new SkillOptError('tasks', `Task "${taskId}" image ${found} is not PNG, JPEG, GIF or WebP`, {
      ...place,
      fix: 'convert the image to PNG or JPEG (the model APIs take no other formats)',
    });
  }
  const size = fileSize(found)!;
  if (size > MAX_IMAGE_BYTES) {
    throw new SkillOptError(
      'tasks',
      `Task "${taskId}" image ${found} is ${mb(size)}, over the ${mb(MAX_IMAGE_BYTES)} the model APIs take`,
      { ...place, fix: 'scale the image down or save it as JPEG' },
    );
  }
  return found;
}

function fileSize(path: string): number | undefined {
  try {
    const st = statSync(path);
    return st.isFile() ? st.size : undefined;
  } catch {
    return undefined;
  }
}

export function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Read a checked image file for a request. */
export function readImage(path: string, detail?: string): ImageInput {
  const mediaType = IMAGE_MEDIA_TYPES[extname(path).toLowerCase()] ?? 'image/png';
  const name = path.split(/[\\/]/).pop() ?? path;
  return {
    mediaType,
    data: readFileSync(path).toString('base64'),
    ...(detail ? { detail } : {}),
    name,
  };
}

/** The largest of the tasks' images, for per-provider size limits. */
export function largestImage(paths: readonly string[]): { path: string; bytes: number } | undefined {
  let best: { path: string; bytes: number } | undefined;
  for (const p of paths) {
    const bytes = fileSize(p) ?? 0;
    if (!best || bytes > best.bytes) best = { path: p, bytes };
  }
  return best;
}
