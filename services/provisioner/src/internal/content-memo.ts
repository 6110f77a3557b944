import { createHash } from "node:crypto";

/**
 * Results of a pure but costly function of strings, remembered by a hash of its inputs. Every
 * pass of every tenant reads its PKI and kubeconfig back from cached Secrets; parsing their keys
 * and certificates through OpenSSL each time cost about a third of the provisioner's CPU in a
 * burst of new tenants, for inputs that almost never change. A throwing computation is not
 * remembered; past `max` entries the least recently used is forgotten.
 */
export class ContentMemo<T> {
  private readonly entries = new Map<string, T>();

  constructor(private readonly max: number) {}

  get(parts: readonly string[], compute: () => T): T {
    const key = keyOf(parts);
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const value = compute();
    this.store(key, value);
    return value;
  }

  /** Records `value` as the result for `parts`, known without computing it. */
  remember(parts: readonly string[], value: T): void {
    this.store(keyOf(parts), value);
  }

  private store(key: string, value: T): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }
}

function keyOf(parts: readonly string[]): string {
  const hash = createHash("sha256");
  // Length-prefixed, so no two different part lists hash the same input.
  for (const part of parts) hash.update(`${part.length}:`).update(part);
  return hash.digest("base64");
}
