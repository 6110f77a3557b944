import { readFileSync } from "node:fs";

/** One request from the API server's audit log (Metadata level), as the harness reads it. */
export interface AuditRequest {
  auditId: string;
  verb: string;
  userAgent: string;
  /** The request URI, with its query. */
  uri: string;
  resource: string;
  namespace: string;
  name: string;
  code: number;
  /** Milliseconds since the epoch when the server received the request. */
  receivedMs: number;
  /** Milliseconds since the epoch of the first stage logged: its response, for all but watches. */
  completedMs: number;
  dryRun: boolean;
}

/** Verbs that change stored state; a dry run is not counted as a write. */
export const WRITE_VERBS: ReadonlySet<string> = new Set(["create", "update", "patch", "delete", "deletecollection"]);

/** Whether a request changes stored state (dry runs do not). */
export function isWrite(request: AuditRequest): boolean {
  return WRITE_VERBS.has(request.verb) && !request.dryRun;
}

/**
 * Every request in the audit log at `path`, once each (a watch logs a started and a completed
 * stage under one audit id), optionally only those the server received at or after `sinceMs`.
 */
export function readAudit(path: string, sinceMs = 0): AuditRequest[] {
  const seen = new Map<string, AuditRequest>();
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line === "") continue;
    let event: AuditEvent;
    try {
      event = JSON.parse(line) as AuditEvent;
    } catch {
      // The last line may be half written.
      continue;
    }
    if (seen.has(event.auditID)) continue;
    const receivedMs = Date.parse(event.requestReceivedTimestamp);
    if (receivedMs < sinceMs) continue;
    seen.set(event.auditID, {
      auditId: event.auditID,
      verb: event.verb,
      userAgent: event.userAgent ?? "",
      uri: event.requestURI,
      resource: event.objectRef?.resource ?? "",
      namespace: event.objectRef?.namespace ?? "",
      name: event.objectRef?.name ?? "",
      code: event.responseStatus?.code ?? 0,
      receivedMs,
      completedMs: Date.parse(event.stageTimestamp ?? event.requestReceivedTimestamp),
      dryRun: /[?&]dryRun=/.test(event.requestURI),
    });
  }
  return [...seen.values()];
}

/** The component a request came from: the user agent up to its first `/` (e.g. `tenantplane-provisioner`). */
export function agentOf(request: AuditRequest): string {
  return request.userAgent.split("/")[0] || "(none)";
}

interface AuditEvent {
  auditID: string;
  verb: string;
  userAgent?: string;
  requestURI: string;
  requestReceivedTimestamp: string;
  stageTimestamp?: string;
  objectRef?: { resource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
}
