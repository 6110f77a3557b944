/**
 * Runs `work` for every item with at most `limit` running at once, each started in item order
 * as a slot frees; resolves when all have settled. A rejection does not stop the others: `work`
 * handles its own errors (this is for independent items, such as one request per object).
 */
export async function forEachBounded<T>(
  items: Iterable<T>,
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const iterator = items[Symbol.iterator]();
  const lane = async (): Promise<void> => {
    for (let next = iterator.next(); !next.done; next = iterator.next()) {
      await work(next.value).catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.floor(limit)) }, lane));
}
