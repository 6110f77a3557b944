import { setTimeout as sleep } from "node:timers/promises";
import { inspect } from "node:util";

/** Thrown from a {@link waitFor} callback to give up at once (e.g. the awaited process died). */
export class StopWaiting extends Error {
  override readonly name = "StopWaiting";
}

/** Options for {@link waitFor}. */
export interface WaitForOptions {
  /** What is being waited for, used in the timeout error. */
  description: string;
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Calls `fn` until it returns a value other than `undefined`, `null` or `false`, and returns
 * that value. A throw counts as "not yet", except {@link StopWaiting}, which is rethrown. On timeout the error quotes the last value and
 * the last error, so a failing wait explains itself.
 */
export async function waitFor<T>(
  fn: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  options: WaitForOptions,
): Promise<T> {
  const { description, timeoutMs = 30_000, intervalMs = 250 } = options;
  const deadline = Date.now() + timeoutMs;
  let lastValue: unknown = "(no value yet)";
  let lastError: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value !== undefined && value !== null && value !== false) return value;
      lastValue = value;
      lastError = undefined;
    } catch (error) {
      if (error instanceof StopWaiting) throw error;
      lastError = error;
    }
    if (Date.now() >= deadline) break;
    await sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now())));
  }
  const details = [`last value: ${inspect(lastValue, { depth: 4, breakLength: 120 })}`];
  if (lastError !== undefined) details.push(`last error: ${describeError(lastError)}`);
  throw new Error(`timed out after ${timeoutMs}ms waiting for ${description}; ${details.join("; ")}`);
}

function describeError(error: unknown): string {
  if (error instanceof Error) {
    const body = (error as { body?: unknown }).body;
    return body === undefined ? error.message : `${error.message} ${inspect(body, { depth: 3 })}`;
  }
  return inspect(error);
}
