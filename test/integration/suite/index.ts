/** extensionTestsPath entry of the trusted suite (bundled to .cache/vscode-tests/trusted/index.js). */
import { runMochaIn } from '../harness/mochaRun';

export function run(): Promise<void> {
  return runMochaIn(__dirname);
}
