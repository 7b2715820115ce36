// Types of scripts/testCounts.mjs, for its unit test (test/unit/scripts/testCounts.test.ts).
export declare const RESULTS_ENV: 'SKILLOPT_TEST_RESULTS';

export interface Results {
  passed: number;
  failed: number;
  failures: string[];
}

export declare function parseResults(text: string): Results;

export declare class Tally {
  passed: number;
  failed: number;
  failures: string[];
  check(name: string, exitCode: number): void;
  infra(name: string, exitCode: number): void;
  stage(name: string, exitCode: number, resultsText: string | undefined): void;
  lines(): string[];
}
