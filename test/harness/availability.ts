/** The parts of a Pod {@link isAvailable} reads. */
export interface PodReadiness {
  metadata?: { deletionTimestamp?: unknown } | undefined;
  status?: { [field: string]: unknown } | undefined;
}

/** Ready and not terminating: what a PodDisruptionBudget counts as available. */
export function isAvailable(pod: PodReadiness): boolean {
  if (pod.metadata?.deletionTimestamp !== undefined) return false;
  const conditions = (pod.status?.["conditions"] ?? []) as ReadonlyArray<{ type?: string; status?: string }>;
  return conditions.some((c) => c.type === "Ready" && c.status === "True");
}

/** A running sampler; `stop` ends it and gives the lowest value seen and how many samples were taken. */
export interface MinimumSampler {
  stop(): Promise<{ min: number; samples: number }>;
}

/**
 * Reads `count` every `intervalMs` (a slow read delays the next one, never overlaps it) until
 * stopped, keeping the lowest value: a disruption budget must hold at every sample of a move.
 */
export function sampleMinimum(count: () => Promise<number>, intervalMs = 200): MinimumSampler {
  let min = Number.POSITIVE_INFINITY;
  let samples = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      min = Math.min(min, await count());
      samples++;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, intervalMs - (Date.now() - started))));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { min, samples };
    },
  };
}
