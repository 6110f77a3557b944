/**
 * A token bucket that can say when its next token arrives: `burst` tokens, refilled at
 * `perSecond`. Used for the global host-API budget and each tenant's write budget.
 */
export class RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!(perSecond > 0) || !(burst >= 1)) throw new RangeError("rate must be > 0 and burst >= 1");
    this.tokens = burst;
    this.last = now();
  }

  /** Takes a token if one is available. */
  tryTake(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Milliseconds until a token is available (0 when one is). */
  waitMs(): number {
    this.refill();
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / this.perSecond) * 1000);
  }

  /** Waits for a token and takes it. */
  async take(): Promise<void> {
    for (;;) {
      if (this.tryTake()) return;
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, this.waitMs())));
    }
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.perSecond);
    this.last = t;
  }
}
