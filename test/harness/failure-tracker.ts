import { beforeEach } from "vitest";

/** Whether any test of the calling file has failed so far. */
export interface FailureTracker {
  failed(): boolean;
}

/**
 * Registers a `beforeEach` that records test failures in the calling file, so an `afterAll`
 * can keep the stack's logs exactly when something went wrong: `stop({ keepLogs: t.failed() })`.
 */
export function trackFailures(): FailureTracker {
  let failed = false;
  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      failed = true;
    });
  });
  return { failed: () => failed };
}
