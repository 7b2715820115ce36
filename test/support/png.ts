/**
 * Just enough PNG decoding to tell a blank screenshot from a real one: 8-bit RGB or RGBA,
 * not interlaced, which is what Chromium writes. No image library is installed for this alone.
 */
import { inflateSync } from 'node:zlib';

export interface PngColours {
  width: number;
  height: number;
  /** Share of pixels (0..1) with the most common colour. */
  dominantShare: number;
  /** Number of distinct colours. */
  distinct: number;
}

const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** The raw pixel rows (filters undone), with the image's size and bytes per pixel. */
export function decodePng(png: Buffer): { width: number; height: number; bpp: number; pixels: Buffer } {
  if (png.length < 8 || !png.subarray(0, 8).equals(signature)) throw new Error('not a PNG');
  let width = 0;
  let height = 0;
  let bpp = 0;
  const data: Buffer[] = [];
  for (let at = 8; at + 8 <= png.length;) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const body = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const [depth, colourType, , , interlace] = body.subarray(8, 13);
      if (depth !== 8 || (colourType !== 2 && colourType !== 6) || interlace !== 0)
        throw new Error(`unsupported PNG: depth ${depth}, colour type ${colourType}, interlace ${interlace}`);
      bpp = colourType === 6 ? 4 : 3;
    } else if (type === 'IDAT') data.push(body);
    else if (type === 'IEND') break;
    at += 12 + length;
  }
  if (!bpp) throw new Error('PNG without a header');
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * bpp;
  if (raw.length < height * (stride + 1)) throw new Error('PNG data is truncated');
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = y * stride;
    if (filter > 4) throw new Error(`unknown PNG filter ${filter}`);
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? pixels[out + x - bpp]! : 0;
      const b = y > 0 ? pixels[out - stride + x]! : 0;
      const c = x >= bpp && y > 0 ? pixels[out - stride + x - bpp]! : 0;
      const predictor =
        filter === 0 ? 0 : filter === 1 ? a : filter === 2 ? b : filter === 3 ? (a + b) >> 1 : paeth(a, b, c);
      pixels[out + x] = (line[x]! + predictor) & 0xff;
    }
  }
  return { width, height, bpp, pixels };
}

/** How varied the image's colours are (alpha ignored). */
export function pngColours(png: Buffer): PngColours {
  const { width, height, bpp, pixels } = decodePng(png);
  const counts = new Map<number, number>();
  for (let i = 0; i < pixels.length; i += bpp) {
    const rgb = (pixels[i]! << 16) | (pixels[i + 1]! << 8) | pixels[i + 2]!;
    counts.set(rgb, (counts.get(rgb) ?? 0) + 1);
  }
  const top = Math.max(0, ...counts.values());
  return { width, height, dominantShare: width * height ? top / (width * height) : 1, distinct: counts.size };
}
