import * as z from "zod";

/**
 * When a tenant is quarantined: after `crashes` worker crashes counted against it within
 * `windowMs`. A crash is counted against a tenant when a worker died (its membership expired
 * without a hand-over) while its "busy" marker for that tenant was set.
 */
export interface CrashPolicy {
  crashes: number;
  windowMs: number;
}

/** Three crashes in ten minutes: a single OOM or a node loss is not enough, a crash loop is. */
export const DEFAULT_CRASH_POLICY: CrashPolicy = { crashes: 3, windowMs: 600_000 };

const crashSchema = z.object({
  /** The worker that died. */
  worker: z.string(),
  /** Epoch ms when the crash was counted (the marker's worker was found gone). */
  at: z.number(),
  /** Revision of the busy marker it left: counting the same marker twice is a no-op. */
  marker: z.number(),
});
export type Crash = z.infer<typeof crashSchema>;

/** What the ledger stores per tenant (key `c.<tenant>`). */
export const crashRecordSchema = z.object({
  crashes: z.array(crashSchema).default([]),
  /** Set once the tenant is quarantined; only an operator's release clears it. */
  quarantined: z
    .object({
      at: z.number(),
      /** The crashes that led to it, for the message. */
      crashes: z.array(crashSchema),
      /** The release annotation's value when it was quarantined: only another value releases it. */
      standingToken: z.string().optional(),
    })
    .optional(),
  /** The last release: the annotation value that did it, and when. */
  released: z.object({ at: z.number(), token: z.string() }).optional(),
});
export type CrashRecord = z.infer<typeof crashRecordSchema>;

/** An empty record (a tenant that never crashed a worker). */
export function emptyRecord(): CrashRecord {
  return { crashes: [] };
}

/** Parses a stored record; anything unreadable counts as empty (the ledger is advisory, never a reason to stop). */
export function parseRecord(text: string | undefined): CrashRecord {
  if (text === undefined) return emptyRecord();
  try {
    const parsed = crashRecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : emptyRecord();
  } catch {
    return emptyRecord();
  }
}

/** The crashes counted within the window ending at `now`, oldest first. */
export function recentCrashes(record: CrashRecord, policy: CrashPolicy, now: number): Crash[] {
  return record.crashes.filter((c) => now - c.at < policy.windowMs).sort((a, b) => a.at - b.at);
}

/** The outcome of counting one crash. */
export interface Counted {
  record: CrashRecord;
  /** False when this marker was counted before (another worker got there first). */
  counted: boolean;
  /** True when this crash put the tenant in quarantine. */
  quarantinedNow: boolean;
  /** Crashes within the window, this one included. */
  recent: Crash[];
}

/**
 * Counts `crash` against the tenant: crashes older than the window are forgotten, and the
 * `policy.crashes`-th within it quarantines the tenant (`releaseToken` is the value the release
 * annotation has now, so an annotation left from an earlier release does not release it again).
 */
export function countCrash(
  record: CrashRecord,
  crash: Crash,
  policy: CrashPolicy,
  now: number,
  releaseToken: string | undefined,
): Counted {
  const known = record.crashes.some((c) => c.worker === crash.worker && c.marker === crash.marker);
  const recent = recentCrashes(
    { ...record, crashes: known ? record.crashes : [...record.crashes, crash] },
    policy,
    now,
  );
  if (known) return { record, counted: false, quarantinedNow: false, recent };
  const next: CrashRecord = { ...record, crashes: recent };
  const quarantinedNow = record.quarantined === undefined && recent.length >= policy.crashes;
  if (quarantinedNow) {
    next.quarantined = {
      at: now,
      crashes: recent,
      ...(releaseToken === undefined ? {} : { standingToken: releaseToken }),
    };
  }
  return { record: next, counted: true, quarantinedNow, recent };
}

/**
 * The record after an operator's release, or undefined when `token` releases nothing: the tenant
 * is not quarantined, no annotation is set, or it still has the value it had at quarantine time.
 * A release forgets the crashes too: the tenant starts again with a clean slate, on probation.
 */
export function release(record: CrashRecord, token: string | undefined, now: number): CrashRecord | undefined {
  if (record.quarantined === undefined || token === undefined) return undefined;
  if (token === record.quarantined.standingToken) return undefined;
  return { crashes: [], released: { at: now, token } };
}

/**
 * Until when a tenant runs alone on its worker (see the supervisor): a window after its last
 * counted crash or its release, so that should it crash the worker again, it is the only tenant
 * busy and only it is blamed. Undefined when it is not on probation (or quarantined).
 */
export function probationUntil(record: CrashRecord, policy: CrashPolicy, now: number): number | undefined {
  if (record.quarantined !== undefined) return undefined;
  const last = Math.max(record.released?.at ?? -Infinity, ...record.crashes.map((c) => c.at));
  const until = last + policy.windowMs;
  return until > now ? until : undefined;
}

/** Whether the tenant is on probation now (see {@link probationUntil}). */
export function onProbation(record: CrashRecord, policy: CrashPolicy, now: number): boolean {
  return probationUntil(record, policy, now) !== undefined;
}
