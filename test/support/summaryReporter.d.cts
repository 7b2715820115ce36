// Types of summaryReporter.cjs, for the integration harness that runs it inside VS Code.
import type Mocha from 'mocha';

declare class SummaryReporter extends Mocha.reporters.Spec {}
export = SummaryReporter;
