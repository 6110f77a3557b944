/** A token bucket: `burst` tokens, refilled at `perSecond`; take() says whether one was available. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  /**
   * Takes `cost` tokens if the bucket holds them. A cost above the burst is taken from a full
   * bucket (it can never hold more), so nothing waits forever.
   */
  take(cost = 1): boolean {
    this.refill();
    const needed = Math.min(cost, this.burst);
    if (this.tokens < needed) return false;
    this.tokens -= needed;
    return true;
  }

  /** Milliseconds until take(cost) can succeed (0 when it can now). */
  waitMs(cost = 1): number {
    this.refill();
    const needed = Math.min(cost, this.burst);
    return this.tokens >= needed ? 0 : Math.ceil(((needed - this.tokens) / this.perSecond) * 1000);
  }

  /** Tokens in the bucket now. */
  available(): number {
    this.refill();
    return this.tokens;
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.perSecond);
    this.last = t;
  }
}

/** A pause between requests this long ends a run of held-back requests. */
const IDLE_MS = 1_000;

/**
 * A request budget shared by every request of a client: `perSecond` on average, up to `burst`
 * at once. `wait()` resolves when the request may go; waiters go in arrival order, and only the
 * first of them sleeps, until its token is due.
 */
export class RequestBudget {
  private readonly bucket: TokenBucket;
  private queue: Promise<void> = Promise.resolve();
  /** Requests asked for and not yet let go, and what they cost together (each at most the burst). */
  private pending = 0;
  private pendingCost = 0;
  /** When requests began having to sleep for the budget; cleared by one that goes at once. */
  private sleepingSince: number | undefined;
  private lastLetGo = 0;

  constructor(
    readonly perSecond: number,
    readonly burst: number,
    private readonly now: () => number = Date.now,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {
    if (!(perSecond > 0) || !(burst >= 1)) throw new RangeError("a request budget needs perSecond > 0 and burst >= 1");
    this.bucket = new TokenBucket(burst, perSecond, now);
  }

  /** Milliseconds until the budget has a request's token (0 when it has one now). */
  waitMs(): number {
    return this.bucket.waitMs();
  }

  /** Milliseconds until every request waiting now has gone (0 when none waits for tokens). */
  backlogMs(): number {
    const short = this.pendingCost - this.bucket.available();
    return short > 0 ? Math.ceil((short / this.perSecond) * 1000) : 0;
  }

  /**
   * How long the budget has been holding requests back: since the first of an unbroken run of
   * requests that had to sleep for it. 0 once a request goes at once, and once nothing has
   * asked for IDLE_MS (the gap between one paced write and the next is not an end).
   */
  holdingBackMs(): number {
    if (this.sleepingSince === undefined) return 0;
    const now = this.now();
    if (this.pending === 0 && now - this.lastLetGo > IDLE_MS) return 0;
    return now - this.sleepingSince;
  }

  /** Resolves when `cost` tokens (one request, or a write's bytes) are taken, after earlier waiters. */
  wait(cost = 1): Promise<void> {
    const charged = Math.min(cost, this.burst);
    this.pending++;
    this.pendingCost += charged;
    const turn = this.queue.then(async () => {
      if (this.now() - this.lastLetGo > IDLE_MS) this.sleepingSince = undefined;
      let slept = false;
      while (!this.bucket.take(cost)) {
        this.sleepingSince ??= this.now();
        slept = true;
        await this.sleep(Math.max(1, this.bucket.waitMs(cost)));
      }
      if (!slept) this.sleepingSince = undefined;
      this.pending--;
      this.pendingCost -= charged;
      this.lastLetGo = this.now();
    });
    this.queue = turn;
    return turn;
  }
}
