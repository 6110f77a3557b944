import type { JsonClient, RawObject } from "@tenantplane/kube";
import {
  ANNOTATION_VIRTUAL_NAME,
  ANNOTATION_VIRTUAL_NAMESPACE,
  LABEL_MANAGED_BY,
  LABEL_TENANT,
  labelValue,
  MANAGED_BY,
} from "@tenantplane/mapping";
import type { DecisionError, PlannedDecision } from "@tenantplane/messaging";
import { describe as describeError, forEachBounded, normalizeError, type Logger } from "@tenantplane/runtime";
import {
  ANNOTATION_VIRTUAL_SERVICE_ACCOUNT,
  ANNOTATION_VIRTUAL_UID,
  LABEL_TOKEN_FOR_POD,
  TOKEN_SECRET_CA_KEY,
  TOKEN_SECRET_NAMESPACE_KEY,
  tokenRequestsOf,
  tokenSecretName,
  type HostObject,
  type TokenRequestSpec,
} from "@tenantplane/sync";
import { TRANSIENT_FAIL_AFTER_MS } from "./failure-memory.js";
import type { HostWriter } from "./host-writer.js";
import { OwnWrites } from "./own-writes.js";
import { hostAnswerOf } from "./write-failure.js";

/** Annotation on a token Secret: when its earliest token is refreshed (RFC 3339). */
export const ANNOTATION_TOKEN_REFRESH_AT = "tenantplane.io/token-refresh-at";
/** Annotation on a token Secret: the host Pod uid its tokens were minted for. */
export const ANNOTATION_TOKEN_POD_UID = "tenantplane.io/token-pod-uid";
/** Tokens are refreshed at this fraction of their lifetime: before the 80% the kubelet uses, with a margin. */
export const REFRESH_FRACTION = 0.75;

/** Token mints one tenant's keeper runs at once. */
const MINT_CONCURRENCY = 8;

/** What one tenant's token keeper reads and writes through. */
export interface PodTokenDeps {
  tenant: string;
  tenantClient: JsonClient;
  writer: HostWriter;
  /** The tenant API's CA (PEM), the `ca.crt` of every token Secret. */
  tenantCaPem: string;
  /** Host Pod copies of this tenant, as the host cache holds them. */
  hostPods(): RawObject[];
  /** The host Pod `name` in the tenant's host namespace, from the host cache. */
  hostPod(name: string): RawObject | undefined;
  /** The host Secret `name` in the tenant's host namespace, from the host cache. */
  hostSecret(name: string): RawObject | undefined;
  /** Upper bound on a token's time before refresh (the kubelet's is 24 h). */
  maxRefreshSeconds: number;
  mayWrite(): boolean;
  writeToken(): Promise<void>;
  publish(decision: PlannedDecision): Promise<void>;
  /**
   * Told once per host Pod and answer, not per retry: the tokens of a host Pod cannot be
   * minted or stored (its containers wait for the Secret meanwhile).
   */
  onFailure?(failure: MintFailure): void;
  logger: Logger;
  now?: () => number;
}

/** Why the token Secret of one host Pod could not be made, as the keeper reports it. */
export interface MintFailure {
  /** The tenant Pod the tokens are for. */
  tenantRef: { namespace: string; name: string };
  /** The token Secret in the host namespace. */
  hostRef: { namespace: string; name: string };
  /** The host Pod copy. */
  hostPod: string;
  /** The API server's answer; `step` says which server. */
  error: DecisionError;
  step: "TokenRequest" | "Secret";
  /** What the tenant is told, naming the ServiceAccount and the server that refused. */
  message: string;
  /** Tells this report from every other of this Pod: when its run of failures began, and which report of the run it is. */
  instance: string;
}

/** What the keeper decided for one host Pod. */
export interface TokenWork {
  pod: RawObject;
  secret: string;
  why: string;
  existing: RawObject | undefined;
}

/**
 * The token Secrets that need minting now: a host Pod with token requests whose Secret is
 * absent, was made for another Pod (uid), lacks a token, or is due for refresh. Pure.
 */
export function dueTokenWork(
  pods: readonly RawObject[],
  secretOf: (name: string) => RawObject | undefined,
  now: number,
): TokenWork[] {
  const out: TokenWork[] = [];
  for (const pod of pods) {
    const requests = requestsOf(pod);
    if (requests.length === 0 || pod.metadata.deletionTimestamp !== undefined || pod.metadata.uid === undefined)
      continue;
    const secret = tokenSecretName(pod.metadata.name);
    const existing = secretOf(secret);
    const why = staleness(existing, pod.metadata.uid, requests, now);
    if (why !== undefined) out.push({ pod, secret, why, existing });
  }
  return out;
}

/**
 * A cached host Pod's token requests, parsed once per version: every check reads every Pod,
 * and a cache replaces an object when it changes, so its identity is its version.
 */
const parsedRequests = new WeakMap<RawObject, TokenRequestSpec[]>();
function requestsOf(pod: RawObject): TokenRequestSpec[] {
  let requests = parsedRequests.get(pod);
  if (requests === undefined) {
    requests = tokenRequestsOf(pod);
    parsedRequests.set(pod, requests);
  }
  return requests;
}

/** The host Pod a token Secret belongs to, by name, or undefined for another Secret. */
export function podOfTokenSecret(secret: string): string | undefined {
  const suffix = tokenSecretName("");
  return secret.endsWith(suffix) ? secret.slice(0, -suffix.length) : undefined;
}

function staleness(
  secret: RawObject | undefined,
  podUid: string,
  requests: readonly TokenRequestSpec[],
  now: number,
): string | undefined {
  if (secret === undefined) return "absent";
  const annotations = secret.metadata.annotations ?? {};
  if (annotations[ANNOTATION_TOKEN_POD_UID] !== podUid) return "made for an earlier Pod of that name";
  const data = (secret as { data?: Record<string, string> }).data ?? {};
  if (requests.some((r) => data[r.key] === undefined)) return "lacks a requested token";
  const refreshAt = Date.parse(annotations[ANNOTATION_TOKEN_REFRESH_AT] ?? "");
  if (!Number.isFinite(refreshAt) || refreshAt <= now) return "due for refresh";
  return undefined;
}

interface TokenRequestStatus {
  status?: { token?: string; expirationTimestamp?: string };
}

/**
 * Keeps the token Secret of every host Pod copy of one tenant: tokens minted with
 * TokenRequest on the tenant API for the tenant Pod's ServiceAccount (audience and expiry as
 * the Pod asked, bound to the tenant Pod), the tenant CA and the virtual namespace; owned by
 * the host Pod, so the host deletes it with the Pod; refreshed at {@link REFRESH_FRACTION} of
 * the shortest token's lifetime. Token values never reach a log line or a Decision.
 */
export class PodTokenKeeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** Host Pods changed since the last check; the periodic check reads them all. */
  private readonly changed = new Set<string>();
  private full = true;
  /** Consecutive failures per host Pod, for backoff, and the last answer reported for it. */
  private readonly failures = new Map<string, FailureRun>();
  /**
   * Secrets this keeper wrote that the host cache may not show yet: a host Pod's next change
   * (it is scheduled, it runs) pokes a check before the Secret's watch event arrives, and a
   * check that read the cache alone minted the token again (71 TokenRequests for 60 Pods).
   */
  private readonly written = new OwnWrites();

  constructor(
    private readonly deps: PodTokenDeps,
    private readonly tickMs = 1_000,
    /** Mints in flight at once; the tenant's write budget still paces their Secret writes. */
    private readonly concurrency = MINT_CONCURRENCY,
  ) {}

  /** Starts the periodic check of every host Pod (refresh times, retries); {@link poke} runs one sooner. */
  start(): void {
    this.timer = setInterval(() => this.poke(), this.tickMs);
    this.timer.unref();
  }

  /**
   * Checks the host Pod `name` soon (it, or its token Secret, changed). Checking only the Pods
   * that changed keeps a burst of Pods linear: a check of every Pod per change cost a tenant
   * creating N Pods about 4N checks of N Pods each.
   */
  pokePod(name: string): void {
    this.changed.add(name);
    this.poke(false);
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** Runs a check now (one at a time; a poke during a check runs another after it), of every Pod unless `full` is false. */
  poke(full = true): void {
    if (this.stopped) return;
    if (full) this.full = true;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = this.check()
      .catch((err: unknown) => this.deps.logger.warn({ err: describeError(err) }, "token check failed"))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.poke(false);
        }
      });
  }

  /** Resolves when no check is running. */
  async idle(): Promise<void> {
    while (this.running !== undefined) await this.running;
  }

  // Mints run side by side (each a TokenRequest, a Secret write and a Decision): one at a time,
  // the last of a hundred Pods created at once waited for ninety-nine round trip chains.
  private async check(): Promise<void> {
    const now = this.now();
    this.written.prune(now);
    const secretOf = (name: string) => this.written.view(name, this.deps.hostSecret(name), now);
    const pods = this.full ? this.deps.hostPods() : this.changedPods();
    this.full = false;
    this.changed.clear();
    const work = dueTokenWork(pods, secretOf, now).filter(
      (item) => (this.failures.get(item.pod.metadata.name)?.until ?? 0) <= now,
    );
    await forEachBounded(work, this.concurrency, async (item) => {
      if (this.stopped || !this.deps.mayWrite()) return;
      try {
        await this.mint(item);
        this.failures.delete(item.pod.metadata.name);
      } catch (err) {
        const run = this.failures.get(item.pod.metadata.name) ?? { count: 0, until: 0, since: now, reports: 0 };
        run.count += 1;
        run.until = now + Math.min(60_000, 500 * 2 ** run.count);
        this.failures.set(item.pod.metadata.name, run);
        this.deps.logger.warn(
          { pod: item.pod.metadata.name, err: describeError(err) },
          "cannot mint the tenant token for a host Pod; retrying",
        );
        this.report(item, err, run, now);
      }
    });
  }

  private changedPods(): RawObject[] {
    const pods: RawObject[] = [];
    for (const name of this.changed) {
      const pod = this.deps.hostPod(name);
      if (pod !== undefined) pods.push(pod);
    }
    return pods;
  }

  // The same answer again is a retry, not news; a different one (the ServiceAccount deleted,
  // then the Secret refused) is reported in turn. A transient one (a timeout, throttling, a
  // 5xx) is reported only once it has lasted as long as a write's would be (failure-memory.ts).
  private report(item: TokenWork, err: unknown, run: FailureRun, now: number): void {
    const failure = mintFailureOf(item, err);
    if (failure === undefined || this.deps.onFailure === undefined) return;
    const transient = normalizeError(err instanceof MintError ? err.cause : err).transient;
    if (transient && now - run.since < TRANSIENT_FAIL_AFTER_MS) return;
    const seen = `${failure.step} ${failure.error.code} ${failure.error.reason} ${failure.error.message}`;
    if (run.reported === seen) return;
    run.reported = seen;
    run.reports += 1;
    this.deps.onFailure({ ...failure, instance: `${run.since}:${run.reports}` });
  }

  private async mint(item: TokenWork): Promise<void> {
    const { pod } = item;
    const annotations = pod.metadata.annotations ?? {};
    const namespace = annotations[ANNOTATION_VIRTUAL_NAMESPACE];
    const name = annotations[ANNOTATION_VIRTUAL_NAME];
    const uid = annotations[ANNOTATION_VIRTUAL_UID];
    const account = annotations[ANNOTATION_VIRTUAL_SERVICE_ACCOUNT] ?? "default";
    if (namespace === undefined || name === undefined || uid === undefined) {
      throw new Error(`host Pod ${pod.metadata.name} lacks its tenant identity annotations`);
    }
    const data: Record<string, string> = {
      [TOKEN_SECRET_CA_KEY]: base64(this.deps.tenantCaPem),
      [TOKEN_SECRET_NAMESPACE_KEY]: base64(namespace),
    };
    const issued = this.now();
    let refreshAt = issued + this.deps.maxRefreshSeconds * 1000;
    for (const request of tokenRequestsOf(pod)) {
      const answer = await this.tokenRequest(namespace, account, {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: {
          ...(request.audience === undefined ? {} : { audiences: [request.audience] }),
          expirationSeconds: request.expirationSeconds,
          boundObjectRef: { apiVersion: "v1", kind: "Pod", name, uid },
        },
      });
      const token = answer.status?.token;
      if (token === undefined) throw new MintError("TokenRequest", new Error("TokenRequest answered without a token"));
      data[request.key] = base64(token);
      // The API server may extend a token it issues; refresh on the lifetime the Pod asked for, like the kubelet.
      const expires = Date.parse(answer.status?.expirationTimestamp ?? "");
      const lifetime = Math.min(
        request.expirationSeconds * 1000,
        Number.isFinite(expires) ? expires - issued : Infinity,
      );
      refreshAt = Math.min(refreshAt, issued + REFRESH_FRACTION * lifetime);
    }
    const secret: HostObject = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: item.secret,
        namespace: pod.metadata.namespace ?? "",
        labels: {
          [LABEL_MANAGED_BY]: MANAGED_BY,
          [LABEL_TENANT]: labelValue(this.deps.tenant),
          [LABEL_TOKEN_FOR_POD]: labelValue(pod.metadata.name),
        },
        annotations: {
          [ANNOTATION_TOKEN_POD_UID]: pod.metadata.uid ?? "",
          [ANNOTATION_TOKEN_REFRESH_AT]: new Date(refreshAt).toISOString(),
        },
      },
      type: "Opaque",
      data,
    };
    // Owned by the host Pod: the host's garbage collector deletes it with the Pod.
    (secret.metadata as Record<string, unknown>)["ownerReferences"] = [
      { apiVersion: "v1", kind: "Pod", name: pod.metadata.name, uid: pod.metadata.uid },
    ];
    await this.deps.writeToken();
    if (this.stopped || !this.deps.mayWrite()) return;
    const fresh = item.existing === undefined;
    const stored = await this.store(secret, pod, item).catch((err: unknown) => {
      throw new MintError("Secret", err);
    });
    this.written.remember(item.secret, stored, this.now());
    this.deps.logger.info(
      { pod: pod.metadata.name, why: item.why, refreshAt: new Date(refreshAt).toISOString() },
      "tenant token minted",
    );
    await this.deps.publish({
      tenant: this.deps.tenant,
      action: fresh ? "Create" : "Update",
      kind: "Secret",
      tenantRef: { namespace, name },
      hostRef: { namespace: secret.metadata.namespace, name: secret.metadata.name },
      reason:
        `token Secret of host Pod ${pod.metadata.name} (${item.why}): TokenRequest on the tenant API for ` +
        `ServiceAccount ${namespace}/${account}, bound to Pod ${namespace}/${name}; next refresh at ${new Date(refreshAt).toISOString()}`,
    });
  }

  private async tokenRequest(namespace: string, account: string, body: unknown): Promise<TokenRequestStatus> {
    try {
      return await this.deps.tenantClient.request<TokenRequestStatus>(
        "POST",
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(account)}/token`,
        { body },
      );
    } catch (err) {
      throw new MintError("TokenRequest", err);
    }
  }

  /** Creates the token Secret, or replaces the one there (its own, for an earlier Pod or due for refresh). */
  private async store(secret: HostObject, pod: RawObject, item: TokenWork): Promise<RawObject> {
    if (item.existing !== undefined) return this.deps.writer.update(secret, item.existing);
    const created = await this.deps.writer.create(secret);
    if (created !== "exists") return created;
    const current = await this.deps.writer.get("Secret", secret.metadata.namespace, secret.metadata.name);
    if (current === undefined || current.metadata.labels?.[LABEL_TOKEN_FOR_POD] !== labelValue(pod.metadata.name)) {
      throw new Error(`Secret ${secret.metadata.name} is held by an object that is not this Pod's token Secret`);
    }
    return this.deps.writer.update(secret, current);
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }
}

/** One host Pod's failures since its last good mint: backoff, and what was reported. */
interface FailureRun {
  count: number;
  until: number;
  since: number;
  reported?: string;
  reports: number;
}

/** A failed mint, with the step that failed: the TokenRequest (tenant API) or the Secret write (host API). */
class MintError extends Error {
  constructor(
    readonly step: MintFailure["step"],
    override readonly cause: unknown,
  ) {
    super(describeError(cause));
  }
}

/** What to report of a failed mint, or nothing for an error that is not an API server's or a keeper's own. */
export function mintFailureOf(item: TokenWork, err: unknown): Omit<MintFailure, "instance"> | undefined {
  const annotations = item.pod.metadata.annotations ?? {};
  const namespace = annotations[ANNOTATION_VIRTUAL_NAMESPACE];
  const name = annotations[ANNOTATION_VIRTUAL_NAME];
  if (namespace === undefined || name === undefined) return undefined;
  const account = annotations[ANNOTATION_VIRTUAL_SERVICE_ACCOUNT] ?? "default";
  const step = err instanceof MintError ? err.step : "Secret";
  const error = hostAnswerOf(err instanceof MintError ? err.cause : err);
  const answer = error.code === 0 ? error.reason : `${error.code} ${error.reason}`;
  const secret = `${item.pod.metadata.namespace ?? ""}/${item.secret}`;
  const message =
    step === "TokenRequest"
      ? `the tenant API refused a token for ServiceAccount ${namespace}/${account} bound to this Pod (${answer}): ${error.message}; ` +
        `its host copy ${item.pod.metadata.name} waits for token Secret ${secret}`
      : `the host refused this Pod's token Secret ${secret} (${answer}): ${error.message}; its host copy ${item.pod.metadata.name} waits for it`;
  return {
    tenantRef: { namespace, name },
    hostRef: { namespace: item.pod.metadata.namespace ?? "", name: item.secret },
    hostPod: item.pod.metadata.name,
    error,
    step,
    message,
  };
}

function base64(text: string): string {
  return Buffer.from(text, "utf8").toString("base64");
}
