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
