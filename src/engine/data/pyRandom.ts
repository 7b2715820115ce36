import { SkillOptError } from '../errors';

/**
 * A bit-exact port of CPython 3.11's `random.Random` (Mersenne Twister MT19937) for the parts the
 * reference uses: integer seeding, `random()`, `getrandbits`, `_randbelow`, `shuffle`, `randrange`,
 * `choice` and `sample`. Splits, epoch orders and analyst minibatches are all drawn from Python's
 * generator, so reproducing it exactly is what lets a run here pick the same items as the reference.
 */

const N = 624;
const M = 397;
const MATRIX_A = 0x9908b0df;
const UPPER_MASK = 0x80000000;
const LOWER_MASK = 0x7fffffff;
const TWO_32 = 4294967296;

export class PyRandom {
  private readonly mt = new Uint32Array(N);
  private mti = N + 1;

  constructor(seed: number | bigint = 0) {
    this.seed(seed);
  }

  /** `random.seed(n)` for an integer n: the absolute value is fed to init_by_array in 32-bit words. */
  seed(seed: number | bigint): void {
    this.initByArray(seedKey(seed));
  }

  /** A float in [0, 1) with 53 random bits, as `random.random()`. */
  random(): number {
    const a = this.genrandUint32() >>> 5;
    const b = this.genrandUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** `getrandbits(k)` for k ≤ 53 (the result must stay an exact JS number). */
  getrandbits(k: number): number {
    checkBits(k, 53);
    if (k === 0) return 0;
    if (k <= 32) return this.genrandUint32() >>> (32 - k);
    let result = 0;
    let scale = 1;
    for (let left = k; left > 0; left -= 32) {
      let word = this.genrandUint32();
      if (left < 32) word >>>= 32 - left;
      result += word * scale;
      scale *= TWO_32;
    }
    return result;
  }

  /** `getrandbits(k)` for any k, as a bigint. */
  getrandbitsBig(k: number): bigint {
    checkBits(k, Number.MAX_SAFE_INTEGER);
    if (k === 0) return 0n;
    let result = 0n;
    let shift = 0n;
    for (let left = k; left > 0; left -= 32) {
      let word = this.genrandUint32();
      if (left < 32) word >>>= 32 - left;
      result |= BigInt(word) << shift;
      shift += 32n;
    }
    return result;
  }

  /** `_randbelow_with_getrandbits(n)`: uniform integer in [0, n) for 0 < n ≤ 2^53. */
  randbelow(n: number): number {
    if (!Number.isSafeInteger(n) || n <= 0) {
      throw new SkillOptError('internal', `randbelow needs a positive safe integer, got ${n}`);
    }
    const k = bitLength(n);
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  /** `randrange(stop)` / `randrange(start, stop[, step])` for integer arguments. */
  randrange(start: number, stop?: number, step = 1): number {
    assertInt(start, 'start');
    if (stop === undefined) {
      if (start > 0) return this.randbelow(start);
      throw new SkillOptError('internal', 'empty range for randrange()');
    }
    assertInt(stop, 'stop');
    assertInt(step, 'step');
    const width = stop - start;
    if (step === 1) {
      if (width > 0) return start + this.randbelow(width);
      throw new SkillOptError('internal', `empty range for randrange() (${start}, ${stop}, ${width})`);
    }
    let n: number;
    if (step > 0) n = Math.floor((width + step - 1) / step);
    else if (step < 0) n = Math.floor((width + step + 1) / step);
    else throw new SkillOptError('internal', 'zero step for randrange()');
    if (n <= 0) throw new SkillOptError('internal', 'empty range for randrange()');
    return start + step * this.randbelow(n);
  }

  /** Fisher–Yates exactly as CPython 3.11 (walks from the end). Shuffles in place and returns the same array. */
  shuffle<T>(list: T[]): T[] {
    for (let i = list.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1);
      const tmp = list[i];
      list[i] = list[j]!;
      list[j] = tmp;
    }
    return list;
  }

  choice<T>(seq: readonly T[]): T {
    if (seq.length === 0) throw new SkillOptError('internal', 'Cannot choose from an empty sequence');
    return seq[this.randbelow(seq.length)];
  }

  /** `sample(population, k)` without `counts`, with CPython's pool-vs-set switch so draws match. */
  sample<T>(population: readonly T[], k: number): T[] {
    const n = population.length;
    if (!Number.isInteger(k) || k < 0 || k > n) {
      throw new SkillOptError('internal', 'Sample larger than population or is negative');
    }
    const result: T[] = new Array<T>(k);
    let setsize = 21;
    if (k > 5) setsize += 4 ** Math.ceil(Math.log(k * 3) / Math.log(4));
    if (n <= setsize) {
      const pool = [...population];
      for (let i = 0; i < k; i++) {
        const j = this.randbelow(n - i);
        result[i] = pool[j]!;
        pool[j] = pool[n - i - 1]!;
      }
    } else {
      const selected = new Set<number>();
      for (let i = 0; i < k; i++) {
        let j = this.randbelow(n);
        while (selected.has(j)) j = this.randbelow(n);
        selected.add(j);
        result[i] = population[j]!;
      }
    }
    return result;
  }

  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1];
      mt[i] = (Math.imul(1812433253, prev ^ (prev >>> 30)) + i) >>> 0;
    }
    this.mti = N;
  }

  private initByArray(key: readonly number[]): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1];
      mt[i] = ((mt[i] ^ Math.imul(prev ^ (prev >>> 30), 1664525)) + key[j] + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1];
      mt[i] = ((mt[i] ^ Math.imul(prev ^ (prev >>> 30), 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
    }
    mt[0] = 0x80000000;
    this.mti = N;
  }

  private genrandUint32(): number {
    const mt = this.mt;
    if (this.mti >= N) {
      let kk = 0;
      for (; kk < N - M; kk++) {
        const y = (mt[kk] & UPPER_MASK) | (mt[kk + 1] & LOWER_MASK);
        mt[kk] = mt[kk + M] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
      }
      for (; kk < N - 1; kk++) {
        const y = (mt[kk] & UPPER_MASK) | (mt[kk + 1] & LOWER_MASK);
        mt[kk] = mt[kk + (M - N)] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
      }
      const y = (mt[N - 1] & UPPER_MASK) | (mt[0] & LOWER_MASK);
      mt[N - 1] = mt[M - 1] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
      this.mti = 0;
    }
    let y = mt[this.mti++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }
}

/** Little-endian 32-bit words of |seed|; zero seeds with the single word 0, as CPython does. */
function seedKey(seed: number | bigint): number[] {
  let n: bigint;
  if (typeof seed === 'bigint') {
    n = seed < 0n ? -seed : seed;
  } else {
    if (!Number.isSafeInteger(seed)) {
      throw new SkillOptError('config', `Random seed must be a whole number below 2^53, got ${seed}`, {
        fix: 'use an integer seed such as 42',
      });
    }
    n = BigInt(Math.abs(seed));
  }
  const key: number[] = [];
  while (n > 0n) {
    key.push(Number(n & 0xffffffffn));
    n >>= 32n;
  }
  return key.length ? key : [0];
}

function bitLength(n: number): number {
  if (n < TWO_32) return 32 - Math.clz32(n);
  return 32 + bitLength(Math.floor(n / TWO_32));
}

function checkBits(k: number, max: number): void {
  if (!Number.isInteger(k) || k < 0 || k > max) {
    throw new SkillOptError('internal', `getrandbits needs 0 ≤ k ≤ ${max}, got ${k}`);
  }
}

function assertInt(value: number, name: string): void {
  if (!Number.isSafeInteger(value)) {
    throw new SkillOptError('internal', `randrange ${name} must be an integer, got ${value}`);
  }
}
