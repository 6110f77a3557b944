import * as z from "zod";

/** Worker ids become one KV key token each: letters, digits, `_`, `=` and `-`, at most 128. */
export const workerIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_=-]{1,128}$/, "a worker id may hold only letters, digits, '_', '=' and '-' (1-128 characters)");

/** The value stored under every lease and membership key. */
export const leaseRecordSchema = z.object({ worker: z.string() });

/** Key of a worker's membership entry. */
export function memberKey(worker: string): string {
  return `m.${worker}`;
}

/** Key of a partition's lease. */
export function partitionKey(partition: number): string {
  return `p.${partition}`;
}

/** What a bucket key names: a member, a partition below `partitions`, or nothing this package writes. */
export type ParsedKey =
  | { kind: "member"; worker: string }
  | { kind: "partition"; partition: number }
  | { kind: "other" };

/** Parses a bucket key; keys of another partition count (a bucket shared by a misconfigured peer) are `other`. */
export function parseKey(key: string, partitions: number): ParsedKey {
  if (key.startsWith("m.")) {
    const worker = key.slice(2);
    return workerIdSchema.safeParse(worker).success ? { kind: "member", worker } : { kind: "other" };
  }
  const match = /^p\.(0|[1-9][0-9]{0,5})$/.exec(key);
  if (match) {
    const partition = Number(match[1]);
    if (partition < partitions) return { kind: "partition", partition };
  }
  return { kind: "other" };
}

/** The worker named in a stored value, or undefined when the value is not a lease record. */
export function workerOf(value: Uint8Array): string | undefined {
  try {
    const parsed = leaseRecordSchema.safeParse(JSON.parse(new TextDecoder().decode(value)));
    return parsed.success ? parsed.data.worker : undefined;
  } catch {
    return undefined;
  }
}

/** The value a worker writes under its lease and membership keys. */
export function encodeRecord(worker: string): string {
  return JSON.stringify({ worker });
}
