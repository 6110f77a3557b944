/**
 * Runs sends queued during one turn of the event loop together, at the end of that turn. The
 * NATS client writes whatever one synchronous run queued in one socket write, but a consumer that
 * settles each message as its handler finishes (each after its own I/O callback) otherwise pays
 * a write per message, and the server a read. The cost is at most one turn of delay per
 * settlement, far inside any ack wait. (DecisionPipeline defers its sends the same way.)
 */
export class TurnBatch {
  private pending: Array<() => void> = [];
  private scheduled = false;

  /** Runs `send` at the end of this turn, in the order queued. */
  add(send: () => void): void {
    this.pending.push(send);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Runs every queued send now (before a connection closes). */
  flush(): void {
    this.scheduled = false;
    const sends = this.pending;
    this.pending = [];
    for (const send of sends) send();
  }
}
