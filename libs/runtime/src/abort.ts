/**
 * Calls `fn` once when `signal` aborts, or at once when it already has: a listener added after
 * the abort never fires, and a loop waiting for it would run for ever. Returns a function that
 * removes the listener.
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) {
    fn();
    return () => undefined;
  }
  signal.addEventListener("abort", fn, { once: true });
  return () => signal.removeEventListener("abort", fn);
}
