import {
  type IsolationProfileSpec,
  parseIsolationProfile,
  parseSyncPolicy,
  type SyncPolicySpec,
  ValidationError,
} from "@tenantplane/api";
import { CliError } from "./cli-io.js";
import { parseDocuments } from "./read-manifests.js";

/**
 * The spec of the single SyncPolicy manifest in `text` (`apiVersion: tenantplane.io/v1alpha1`).
 * Throws a {@link CliError} naming `source`, the document and each bad field.
 */
export function parsePolicyManifest(text: string, source: string): SyncPolicySpec {
  return parseSingle(text, source, "SyncPolicy", (value) => parseSyncPolicy(value).spec);
}

/**
 * The spec of the single IsolationProfile manifest in `text`, defaults applied. Throws a
 * {@link CliError} naming `source`, the document and each bad field.
 */
export function parseProfileManifest(text: string, source: string): IsolationProfileSpec {
  return parseSingle(text, source, "IsolationProfile", (value) => parseIsolationProfile(value).spec);
}

function parseSingle<T>(text: string, source: string, kind: string, parse: (value: unknown) => T): T {
  const documents = parseDocuments(text, source);
  const [only] = documents;
  if (only === undefined || documents.length > 1) {
    throw new CliError(`${source}: expected exactly one ${kind} document, found ${documents.length}`);
  }
  try {
    return parse(only.value);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const fields = error.issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ");
    throw new CliError(`${source}: document ${only.index}: ${error.subject} is invalid: ${fields}`);
  }
}
