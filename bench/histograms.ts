/**
 * Prometheus histograms read from a `/metrics` body, and what happened between two readings:
 * where a service's time went over one phase of a bench.
 */
export interface Histogram {
  /** Cumulative counts by upper bound (`le`), the last one +Inf. */
  buckets: Array<[number, number]>;
  sum: number;
  count: number;
}

/** Each series of histogram `name` in `body`, by its labels other than `le` (`stage="request"`, or "" with none). */
export function readHistograms(body: string, name: string): Map<string, Histogram> {
  const out = new Map<string, Histogram>();
  const of = (labels: string) => {
    let h = out.get(labels);
    if (h === undefined) out.set(labels, (h = { buckets: [], sum: 0, count: 0 }));
    return h;
  };
  for (const line of body.split("\n")) {
    const m = /^(\w+?)(_bucket|_sum|_count)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const value = Number(m[4]);
    const labels = (m[3] ?? "").split(",").filter((l) => l !== "" && !l.startsWith("le="));
    const h = of(labels.join(","));
    if (m[2] === "_sum") h.sum = value;
    else if (m[2] === "_count") h.count = value;
    else {
      const le = /le="([^"]+)"/.exec(m[3] ?? "")?.[1];
      h.buckets.push([le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le), value]);
    }
  }
  for (const h of out.values()) h.buckets.sort((a, b) => a[0] - b[0]);
  return out;
}

/** What `after` observed since `before` (a series absent before counts from zero). */
export function histogramsBetween(
  before: Map<string, Histogram>,
  after: Map<string, Histogram>,
): Map<string, Histogram> {
  const out = new Map<string, Histogram>();
  for (const [labels, a] of after) {
    const b = before.get(labels);
    out.set(labels, {
      buckets: a.buckets.map(([le, n], i) => [le, n - (b?.buckets[i]?.[1] ?? 0)]),
      sum: a.sum - (b?.sum ?? 0),
      count: a.count - (b?.count ?? 0),
    });
  }
  return out;
}

/** The series added bucket by bucket (all read from one histogram, so with the same bounds). */
export function sumHistograms(series: Histogram[]): Histogram {
  const out: Histogram = { buckets: [], sum: 0, count: 0 };
  for (const h of series) {
    h.buckets.forEach(([le, n], i) => {
      const at = out.buckets[i];
      if (at === undefined) out.buckets.push([le, n]);
      else at[1] += n;
    });
    out.sum += h.sum;
    out.count += h.count;
  }
  return out;
}

/**
 * Quantile `q` (0-1), linear within the bucket it falls in, as PromQL's histogram_quantile;
 * past the last finite bound nothing says where, so that bound. NaN without observations.
 */
export function interpolatedQuantile(h: Histogram, q: number): number {
  const total = h.buckets.at(-1)?.[1] ?? 0;
  if (total === 0) return Number.NaN;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const [le, count] of h.buckets) {
    if (count >= rank) {
      if (le === Number.POSITIVE_INFINITY) return lowerBound;
      return lowerBound + (le - lowerBound) * ((rank - lowerCount) / Math.max(1, count - lowerCount));
    }
    lowerBound = le;
    lowerCount = count;
  }
  return lowerBound;
}

/** The upper bound of the bucket holding quantile `q` (0-1): at most that; undefined without observations. */
export function bucketQuantile(h: Histogram, q: number): number | undefined {
  if (h.count <= 0) return undefined;
  const rank = q * h.count;
  for (const [le, n] of h.buckets) if (n >= rank) return le;
  return Number.POSITIVE_INFINITY;
}

/** `412 × mean 3.1 ms, p50 <= 5 ms, p99 <= 50 ms` for one series. */
export function formatHistogram(h: Histogram | undefined): string {
  if (h === undefined || h.count <= 0) return "none";
  const lastFinite = h.buckets.filter(([le]) => le !== Number.POSITIVE_INFINITY).at(-1)?.[0] ?? 0;
  const bound = (q: number) => {
    const le = bucketQuantile(h, q);
    return le === undefined
      ? "-"
      : le === Number.POSITIVE_INFINITY
        ? `> ${lastFinite * 1000} ms`
        : `<= ${le * 1000} ms`;
  };
  return `${h.count} × mean ${((h.sum / h.count) * 1000).toFixed(1)} ms, p50 ${bound(0.5)}, p99 ${bound(0.99)}`;
}
