import type { StreamConfig } from "@nats-io/jetstream";

/** The stream limits tenantplane can be configured to set; `undefined` means "not configured". */
export interface StreamLimits {
  max_age?: number | undefined;
  max_bytes?: number | undefined;
  max_msgs_per_subject?: number | undefined;
}

type Explicit = StreamLimits & { num_replicas?: number | undefined };

const LIMIT_KEYS = ["max_age", "max_bytes", "max_msgs_per_subject"] as const;

/**
 * A limit a stream must have for tenants to be kept apart: DECISIONS' subjects are each one
 * tenant's (`tenantplane.decisions.<tenant>.<kind>.<action>`), so a per-subject limit that
 * discards old messages keeps a tenant's flood among its own messages.
 */
export type Bulkhead = "max_msgs_per_subject";

/**
 * What to change on an existing stream, or undefined for nothing. The stream may be
 * the operator's: it gains tenantplane's subjects and a description when missing,
 * and replicas or limits only where they were explicitly configured AND the change
 * raises them. Nothing is ever lowered, and unconfigured settings are never touched,
 * except a `bulkhead` the stream lacks (unlimited): it gets the configured or built-in
 * value, and a per-subject limit that refuses new messages is made to discard old ones.
 */
export function streamUpdate(
  existing: Pick<StreamConfig, "subjects" | "description" | "num_replicas"> &
    Partial<StreamLimits> & { discard_new_per_subject?: boolean | undefined },
  builtIn: Partial<StreamConfig>,
  explicit: Explicit,
  bulkheads: readonly Bulkhead[] = [],
): Partial<StreamConfig> | undefined {
  const update: Partial<StreamConfig> = {};
  const subjects = existing.subjects ?? [];
  const missing = (builtIn.subjects ?? []).filter((s) => !subjects.includes(s));
  if (missing.length > 0) update.subjects = [...subjects, ...missing];
  if (!existing.description && builtIn.description) update.description = builtIn.description;
  if (explicit.num_replicas !== undefined && explicit.num_replicas > (existing.num_replicas ?? 1)) {
    update.num_replicas = explicit.num_replicas;
  }
  for (const key of LIMIT_KEYS) {
    const wanted = explicit[key];
    if (wanted !== undefined && raises(existing[key], wanted)) update[key] = wanted;
  }
  for (const key of bulkheads) {
    const wanted = explicit[key] ?? builtIn[key];
    if (wanted !== undefined && wanted > 0 && unlimited(existing[key])) update[key] = wanted;
    // Refusing a tenant's next Decision would stall the publisher, which retries until stored.
    if (existing.discard_new_per_subject) update.discard_new_per_subject = false;
  }
  return Object.keys(update).length > 0 ? update : undefined;
}

/**
 * Why a stream's stored configuration does not keep tenants apart, or undefined when it does:
 * every bulkhead must be a limit (not unlimited) that discards old messages.
 */
export function bulkheadProblem(
  stored: Partial<StreamLimits> & { name?: string; discard_new_per_subject?: boolean | undefined },
  bulkheads: readonly Bulkhead[],
): string | undefined {
  for (const key of bulkheads) {
    if (unlimited(stored[key])) {
      return `stream ${stored.name ?? ""} has no ${key} (${String(stored[key])}) after it was set: one tenant could remove every other tenant's messages; check that the server is nats-server >= 2.11 and that nothing resets the stream's limits`;
    }
  }
  if (bulkheads.length > 0 && stored.discard_new_per_subject) {
    return `stream ${stored.name ?? ""} refuses new messages past its per-subject limit (discard_new_per_subject): set it to false`;
  }
  return undefined;
}

function unlimited(value: number | undefined): boolean {
  return value === undefined || value <= 0;
}

// In JetStream 0 (ages) or -1 (counts, bytes) means unlimited, which nothing raises.
function raises(current: number | undefined, wanted: number): boolean {
  if (current === undefined) return true;
  if (current <= 0) return false;
  return wanted > current;
}
