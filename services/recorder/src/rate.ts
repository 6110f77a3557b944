/**
 * At most `max` holders at once; the rest wait in arrival order. Bounds the
 * recorder's Event writes in flight, so that like client-go's broadcaster (one
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

/** A bounded set of recently seen ids: the oldest are forgotten first. */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly max: number) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    this.ids.delete(id);
    this.ids.add(id);
    while (this.ids.size > this.max) this.ids.delete(this.ids.values().next().value!);
  }

  get size(): number {
    return this.ids.size;
  }
}
