import assert from 'node:assert/strict';
import { deflateSync } from 'node:zlib';
import { decodePng, pngColours } from '../../support/png';

function chunk(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(body.length, 0);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, body, Buffer.alloc(4)]); // the decoder does not check CRCs
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** Encodes `pixels` (rows of width × bpp bytes), filtering row y with filter y % 5, as Chromium may. */
function encode(width: number, height: number, bpp: 3 | 4, pixels: Buffer): Buffer {
  const stride = width * bpp;
  const px = (x: number, y: number): number => (x < 0 || y < 0 ? 0 : pixels[y * stride + x]!);
  const rows: number[] = [];
  for (let y = 0; y < height; y++) {
    const filter = y % 5;
    rows.push(filter);
    for (let x = 0; x < stride; x++) {
      const [a, b, c] = [px(x - bpp, y), px(x, y - 1), px(x - bpp, y - 1)];
      const predictor = [0, a, b, (a + b) >> 1, paeth(a, b, c)][filter]!;
      rows.push((px(x, y) - predictor) & 0xff);
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, bpp === 4 ? 6 : 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.from(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe('PNG colours of screenshots', () => {
  it('undoes every row filter and gets the pixels back', () => {
    // Varied bytes, and pseudo-random ones from five values (which make Paeth's predictor break ties).
    const patterns = [
      (i: number) => (i * 37 + (i >> 3)) & 0xff,
      (i: number) => (((i * 2654435761) >>> 29) % 5) * 50,
    ];
    for (const bpp of [3, 4] as const) {
      for (const pattern of patterns) {
        const [width, height] = [40, 30];
        const pixels = Buffer.from(Array.from({ length: width * height * bpp }, (_, i) => pattern(i)));
        const decoded = decodePng(encode(width, height, bpp, pixels));
        assert.deepEqual([decoded.width, decoded.height, decoded.bpp], [width, height, bpp]);
        assert.ok(decoded.pixels.equals(pixels), `bpp ${bpp}: pixels differ`);
      }
    }
  });

  it('finds one colour on a blank image and many on a varied one', () => {
    const blank = pngColours(encode(20, 10, 4, Buffer.alloc(20 * 10 * 4, 0xff)));
    assert.deepEqual(blank, { width: 20, height: 10, dominantShare: 1, distinct: 1 });
    const varied = Buffer.alloc(20 * 10 * 3);
    for (let i = 0; i < 200; i++) varied.set([i, 255 - i, i % 7], i * 3);
    varied.set([0, 255, 0], 3); // the second pixel repeats the first
    const colours = pngColours(encode(20, 10, 3, varied));
    assert.equal(colours.distinct, 199);
    assert.equal(colours.dominantShare, 2 / 200);
  });

  it('refuses what it cannot read', () => {
    assert.throws(() => decodePng(Buffer.from('GIF89a')), /not a PNG/);
    const png = encode(2, 2, 3, Buffer.alloc(12));
    png[8 + 8 + 8] = 16; // IHDR bit depth
    assert.throws(() => decodePng(png), /unsupported PNG: depth 16/);
  });
});
