/**
 * Runs `fire` for a burst of changes at most once per `minIntervalMs`: the first change after a
 * quiet spell fires at once, later ones in the interval are folded into one firing at its end.
 * For views of something that changes with every object (a quota's usage moves with each Pod
 * the worker creates): the tenant sees the latest state at most one interval late, and a burst
 * of a hundred Pods costs a few writes, not a hundred.
 */
export class Pacer {
  private last = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly fire: () => void,
    private readonly minIntervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Something changed: fire now, or once at the end of the current interval. */
  changed(): void {
    if (this.stopped || this.timer !== undefined) return;
    const wait = this.last + this.minIntervalMs - this.now();
    if (wait <= 0) {
      this.last = this.now();
      this.fire();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.stopped) return;
      this.last = this.now();
      this.fire();
    }, wait);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
