/**
 * At most `max` holders at once; the rest wait in arrival order. Bounds Event
 * writes in flight (AggregatedEvents), so that like client-go's broadcaster (one
 * write at a time) Events follow the API server's pace instead of competing
 * with the work they explain: a busy API server answers slower, and fewer
 * Events are written meanwhile.
 */
export class Slots {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly max: number) {}

  /** Runs `work` in a slot, waiting for one first. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.held >= this.max) await new Promise<void>((r) => this.waiting.push(r));
    else this.held++;
    try {
      return await work();
    } finally {
      // The slot passes straight to the next waiter, so a newcomer cannot jump the queue.
      const next = this.waiting.shift();
      if (next) next();
      else this.held--;
    }
  }
}
