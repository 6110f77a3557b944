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
 * What to change on an existing stream, or undefined for nothing. The stream may be
 * the operator's: it gains tenantplane's subjects and a description when missing,
 * and replicas or limits only where they were explicitly configured AND the change
 * raises them. Nothing is ever lowered, and unconfigured settings are never touched.
 */
export function streamUpdate(
  existing: Pick<StreamConfig, "subjects" | "description" | "num_replicas"> & Partial<StreamLimits>,
  builtIn: Partial<StreamConfig>,
  explicit: Explicit,
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
  return Object.keys(update).length > 0 ? update : undefined;
}

// In JetStream 0 (ages) or -1 (counts, bytes) means unlimited, which nothing raises.
function raises(current: number | undefined, wanted: number): boolean {
  if (current === undefined) return true;
  if (current <= 0) return false;
  return wanted > current;
}
