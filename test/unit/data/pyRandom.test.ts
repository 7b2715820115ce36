import assert from 'node:assert/strict';
import { PyRandom } from '../../../src/engine/data/pyRandom';

// Golden values printed by CPython 3.11.7 (`random.Random(seed)`) while writing this port.
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

describe('PyRandom (CPython 3.11 random.Random port)', () => {
  const firstTen: Array<[number | bigint, number[]]> = [
    [
      0,
      [
        0.8444218515250481, 0.7579544029403025, 0.420571580830845, 0.25891675029296335, 0.5112747213686085,
        0.4049341374504143, 0.7837985890347726, 0.30331272607892745, 0.4765969541523558, 0.5833820394550312,
      ],
    ],
    [
      42,
      [
        0.6394267984578837, 0.025010755222666936, 0.27502931836911926, 0.22321073814882275,
        0.7364712141640124, 0.6766994874229113, 0.8921795677048454, 0.08693883262941615, 0.4219218196852704,
        0.029797219438070344,
      ],
    ],
    [
      1043,
      [
        0.9556802703493311, 0.36365221681099247, 0.47173191786405444, 0.6861776279106984, 0.8937972340263081,
        0.3220620502848287, 0.9227010105778878, 0.7487645086442519, 0.762645473384591, 0.2312329148235217,
      ],
    ],
    [
      2 ** 32 + 5,
      [
        0.15727238718789782, 0.2824866316461999, 0.6044540318498407, 0.014523449205355199, 0.6277755437144577,
        0.7776036706010475, 0.9289472909695745, 0.6628729848114159, 0.4957741404348125, 0.3544373582027327,
      ],
    ],
    [
      2 ** 53 - 1,
      [
        0.09425040007102303, 0.22287455761867403, 0.19135148760372034, 0.14744912919638153,
        0.09689391420431037, 0.48078170752638083, 0.03491225293798095, 0.41819833247638094, 0.320667288649211,
        0.7851176739533352,
      ],
    ],
  ];
  for (const [seed, expected] of firstTen) {
    it(`random() matches CPython for seed ${seed}`, () => {
      const rng = new PyRandom(seed);
      assert.deepEqual(
        expected.map(() => rng.random()),
        expected,
      );
    });
  }

  it('seeds larger than 2^53 work as bigints', () => {
    const rng = new PyRandom(2n ** 70n + 11n);
    assert.equal(rng.random(), 0.15112343081660717);
    assert.equal(rng.getrandbitsBig(100), 706661168143813220302528706936n);
  });

  it('negative seeds use the absolute value, as CPython does', () => {
    assert.equal(new PyRandom(-42).random(), new PyRandom(42).random());
  });

  it('getrandbits matches for widths below, at and above 32 bits', () => {
    const rng = new PyRandom(42);
    assert.deepEqual(
      [1, 5, 32, 33, 48, 53, 0, 7].map((k) => rng.getrandbits(k)),
      [1, 3, 107420369, 3184935163, 62827833408400, 6633543228244457, 0, 13],
    );
  });

  it('randbelow matches for small, 32-bit and 53-bit bounds', () => {
    const rng = new PyRandom(5);
    assert.deepEqual(
      [1, 2, 3, 1000, 2 ** 31, 2 ** 32 + 1, 2 ** 52 + 3].map((n) => rng.randbelow(n)),
      [0, 1, 2, 965, 124576495, 3609267711, 1019668859414669],
    );
  });

  it('shuffle(range(50)) matches with seeds 42 and 1042', () => {
    assert.deepEqual(
      new PyRandom(42).shuffle(range(50)),
      [
        25, 23, 19, 11, 4, 45, 26, 9, 29, 16, 31, 21, 12, 3, 39, 38, 10, 24, 35, 0, 43, 18, 33, 48, 41, 30,
        28, 20, 22, 42, 46, 36, 32, 44, 13, 49, 47, 2, 27, 37, 5, 34, 6, 8, 14, 15, 17, 1, 7, 40,
      ],
    );
    assert.deepEqual(
      new PyRandom(1042).shuffle(range(50)),
      [
        12, 42, 34, 45, 26, 7, 35, 29, 33, 28, 23, 38, 48, 5, 0, 4, 46, 14, 44, 36, 6, 16, 49, 41, 47, 13, 24,
        8, 11, 2, 27, 1, 17, 43, 32, 37, 20, 40, 39, 30, 10, 18, 25, 31, 19, 21, 3, 22, 9, 15,
      ],
    );
  });

  it('shuffle works in place and returns the same array', () => {
    const list = range(10);
    assert.equal(new PyRandom(1).shuffle(list), list);
    assert.deepEqual(
      [...list].sort((a, b) => a - b),
      range(10),
    );
  });

  it('randrange matches with and without a step', () => {
    const rng = new PyRandom(7);
    assert.deepEqual(
      [
        rng.randrange(10),
        rng.randrange(5, 100),
        rng.randrange(0, 100, 7),
        rng.randrange(100, 0, -3),
        rng.randrange(2 ** 40),
      ],
      [5, 24, 42, 91, 208460025899],
    );
    assert.throws(() => new PyRandom(1).randrange(5, 5), /empty range/);
  });

  it('sample matches on both the pool and the set path', () => {
    assert.deepEqual(new PyRandom(3).sample(range(10), 4), [3, 8, 2, 7]);
    assert.deepEqual(new PyRandom(3).sample(range(30), 7), [7, 18, 17, 4, 11, 19, 15]);
    assert.deepEqual(new PyRandom(3).sample(range(1000), 8), [243, 606, 557, 133, 378, 937, 618, 485]);
    assert.throws(() => new PyRandom(3).sample(range(3), 4), /larger than population/);
  });

  it('choice matches', () => {
    const rng = new PyRandom(9);
    const letters = [...'abcdefg'];
    assert.deepEqual(
      letters.concat('h').map(() => rng.choice(letters)),
      ['d', 'e', 'c', 'c', 'b', 'b', 'g', 'f'],
    );
  });

  it('rejects fractional seeds with a config error', () => {
    assert.throws(() => new PyRandom(1.5), { name: 'SkillOptError', reason: 'config' });
  });
});
