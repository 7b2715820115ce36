/** extensionTestsPath entry of the Restricted Mode suite (bundled to .cache/vscode-tests/untrusted/index.js). */
import { runMochaIn } from '../harness/mochaRun';

export function run(): Promise<void> {
  return runMochaIn(__dirname);
}
