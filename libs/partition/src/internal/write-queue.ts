/**
 * Starts queued writes first come, first served, at most `limit` at a time. An item waits as it
 * was pushed (nothing is allocated for it until its turn), and it is started only when a slot is
 * free, so whatever its start measures (when the request left) is true of the request.
 */
export class WriteQueue<T> {
  private readonly waiting: T[] = [];
  private running = 0;
  private readonly settled = () => {
    this.running--;
    this.pump();
  };

  /** `start` must not throw; the slot is free again when its promise settles either way. */
  constructor(
    readonly limit: number,
    private readonly start: (item: T) => Promise<unknown>,
  ) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  }

  /** Writes started and not settled yet. */
  get inFlight(): number {
    return this.running;
  }

  /** Writes waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  push(item: T): void {
    this.waiting.push(item);
    this.pump();
  }

  private pump(): void {
    while (this.running < this.limit && this.waiting.length > 0) {
      this.running++;
      this.start(this.waiting.shift()!).then(this.settled, this.settled);
    }
  }
}
