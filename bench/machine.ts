/** What the figures were measured on, so result files from different machines can be compared. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { arch, cpus, freemem, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './harness';

export interface MachineInfo {
  platform: string;
  release: string;
  arch: string;
  cpuModel: string;
  cpus: number;
  memoryGiB: number;
  freeMemoryGiB: number;
  /** 1-minute load average when the bench started (other work on the machine skews timings). */
  loadAverage: number;
  node: string;
  v8: string;
  commit: string;
  /** Files changed in the working tree (the figures may include uncommitted work). */
  uncommittedFiles: number;
  /** µs for one small write + rename in the temp folder: file-system cost differs a lot between machines. */
  writeRenameUs: number;
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, {
      cwd: repoRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return '';
  }
}

function writeRenameCost(): number {
  const dir = mkdtempSync(join(tmpdir(), 'skillopt-bench-fs-'));
  try {
    const n = 300;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const path = join(dir, `f${i % 10}.json`);
      writeFileSync(`${path}.tmp`, '{"ok":true}\n');
      renameSync(`${path}.tmp`, path);
    }
    return ((performance.now() - t0) * 1000) / n;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function machineInfo(): MachineInfo {
  const c = cpus();
  return {
    platform: platform(),
    release: release(),
    arch: arch(),
    cpuModel: c[0]?.model ?? 'unknown',
    cpus: c.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    freeMemoryGiB: Math.round((freemem() / 2 ** 30) * 10) / 10,
    loadAverage: Math.round(loadavg()[0] * 100) / 100,
    node: process.version,
    v8: process.versions.v8,
    commit: git(['rev-parse', '--short', 'HEAD']) || 'unknown',
    uncommittedFiles: git(['status', '--porcelain']).split('\n').filter(Boolean).length,
    writeRenameUs: Math.round(writeRenameCost()),
  };
}
