const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const encoder = new TextEncoder();

/** 32-bit FNV-1a over the UTF-8 bytes of `input`, as an unsigned integer (Go's `hash/fnv` New32a). */
export function fnv1a32(input: string): number {
  let hash = FNV_OFFSET_BASIS;
  for (const byte of encoder.encode(input)) {
    hash ^= byte;
    // Math.imul keeps the product in 32 bits where a plain `*` would lose precision past 2^53.
    hash = Math.imul(hash, FNV_PRIME);
  }
  return hash >>> 0;
}

/**
 * The partition a tenant belongs to: `fnv1a32(tenant) % partitions`, the same number
 * nats-server's `{{partition(P,1)}}` subject mapping gives for a subject whose token is the
 * tenant name, so a stream transform and the lease holders always agree on who owns a tenant.
 */
export function partitionOf(tenant: string, partitions: number): number {
  assertPartitionCount(partitions);
  return fnv1a32(tenant) % partitions;
}

/** Throws a RangeError unless `partitions` is a whole number from 1 to 65536. */
export function assertPartitionCount(partitions: number): void {
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > 65_536) {
    throw new RangeError(`partition count must be a whole number from 1 to 65536, got ${String(partitions)}`);
  }
}
