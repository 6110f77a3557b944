import type * as z from "zod";

/** One problem found in an object: the dotted field path (`spec.controlPlane.storage.size`) and what to do. */
export interface FieldIssue {
  path: string;
  message: string;
}

/**
 * Thrown by the `parseX` functions when an object does not match its schema. `issues` names
 * every offending field; `message` joins them so a log line or CLI error is self-explanatory.
 */
export class ValidationError extends Error {
  override readonly name = "ValidationError";

  constructor(
    /** What was parsed, e.g. `TenantCluster "dev"`. */
    readonly subject: string,
    readonly issues: readonly FieldIssue[],
  ) {
    super(`${subject} is invalid: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`);
  }
}

/** Renders a zod path the way the Kubernetes API server does: `spec.cidrs[0].cidr`, `hard[requests.cpu]`. */
export function formatFieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") {
      out += `[${segment}]`;
    } else {
      const key = String(segment);
      out += /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? (out === "" ? key : `.${key}`) : `[${key}]`;
    }
  }
  return out === "" ? "<root>" : out;
}

/**
 * Parses `input` with `schema`, throwing a {@link ValidationError} about `subject` on failure;
 * `at` is where `input` sits in its object (`["spec"]`), so paths read the same either way.
 */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  input: unknown,
  subject: string,
  at: readonly PropertyKey[] = [],
): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) {
    return result.data;
  }
  throw new ValidationError(
    subject,
    result.error.issues.map((issue) => ({ path: formatFieldPath([...at, ...issue.path]), message: issue.message })),
  );
}

/** `Kind "name"` for error subjects, tolerating input that is not an object at all. */
export function describeSubject(kind: string, input: unknown): string {
  const name = (input as { metadata?: { name?: unknown } } | null)?.metadata?.name;
  return typeof name === "string" && name !== "" ? `${kind} ${JSON.stringify(name)}` : kind;
}
