import { parseSyncPolicy, type SyncPolicySpec, ValidationError } from "@tenantplane/api";
import { CliError } from "./cli-io.js";
import { parseDocuments } from "./read-manifests.js";

/**
 * The spec of the single SyncPolicy manifest in `text` (`apiVersion: tenantplane.io/v1alpha1`).
 * Throws a {@link CliError} naming `source`, the document and each bad field.
 */
export function parsePolicyManifest(text: string, source: string): SyncPolicySpec {
  const documents = parseDocuments(text, source);
  const [only] = documents;
  if (only === undefined || documents.length > 1) {
    throw new CliError(`${source}: expected exactly one SyncPolicy document, found ${documents.length}`);
  }
  try {
    return parseSyncPolicy(only.value).spec;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const fields = error.issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ");
    throw new CliError(`${source}: document ${only.index}: ${error.subject} is invalid: ${fields}`);
  }
}
