import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../../src/engine/config/load';
import { expectConfigError, tempDir } from './helpers';

// A config saved by Windows PowerShell (`>` writes UTF-16) or in Latin-1 was read as UTF-8: the
// first became "the top level must be a mapping", the second trained on U+FFFD in its values.
describe('config/load: the file must be UTF-8', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => ({ dir, cleanup } = tempDir()));
  afterEach(() => cleanup());

  const yaml = 'train:\n  seed: 1\nmodel:\n  target: "caf\u00e9"\n';

  it('names UTF-16 (with its byte-order mark) and the fix', () => {
    for (const bom of [Buffer.from([0xff, 0xfe]), Buffer.from([0xfe, 0xff])]) {
      const file = path.join(dir, 'u16.yaml');
      const body = Buffer.from(yaml, 'utf16le');
      if (bom[0] === 0xfe) body.swap16();
      fs.writeFileSync(file, Buffer.concat([bom, body]));
      expectConfigError(() => loadConfig(file), { file, includes: ['UTF-16', 'UTF-8'] });
    }
  });

  it('names the line of a byte that is not UTF-8 (a Latin-1 file)', () => {
    const file = path.join(dir, 'latin1.yaml');
    fs.writeFileSync(file, Buffer.from(yaml, 'latin1'));
    expectConfigError(() => loadConfig(file), { file, line: 4, includes: ['not valid UTF-8'] });
  });

  it('names the base config when the bad bytes are in a _base_ file', () => {
    const base = path.join(dir, 'base.yaml');
    fs.writeFileSync(base, Buffer.from(yaml, 'latin1'));
    const child = path.join(dir, 'child.yaml');
    fs.writeFileSync(child, '_base_: base.yaml\ntrain:\n  seed: 2\n');
    expectConfigError(() => loadConfig(child), { file: base, line: 4, includes: ['not valid UTF-8'] });
  });

  it('reads a UTF-8 file with a byte-order mark, as before', () => {
    const file = path.join(dir, 'bom.yaml');
    fs.writeFileSync(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(yaml)]));
    const { config } = loadConfig(file);
    assert.equal(config.train.seed, 1);
    assert.equal(config.model.target, 'caf\u00e9');
  });
});
