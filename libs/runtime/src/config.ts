import * as z from "zod";
import { TerminalError } from "./errors.js";

/** A configuration value that cannot be used; the message names the variable and the fix. */
export class ConfigError extends TerminalError {
  constructor(message: string) {
    super(message, { code: "Config" });
  }
}

/**
 * Parses environment variables through a zod object schema whose keys are the
 * variable names. The first problem becomes one line: `NATS_URL: <what is wrong>`.
 */
export function parseEnv<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const variable = issue?.path.join(".") || "environment";
  throw new ConfigError(`${variable}: ${issue?.message ?? "invalid"}`);
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** Variables every service reads. Extend with `.extend({...})` for service-specific ones. */
export const CommonEnvSchema = z.object({
  NATS_URL: z
    .string({ error: "is required: set it to the NATS server, e.g. nats://nats:4222" })
    .min(1, "is required: set it to the NATS server, e.g. nats://nats:4222"),
  NATS_USER: z.string().optional(),
  NATS_PASSWORD: z.string().optional(),
  NATS_TOKEN: z.string().optional(),
  NATS_CREDS_FILE: z.string().optional(),
  /** "true" requires TLS even without the files below (the system CAs verify the server). */
  NATS_TLS: z.enum(["true", "false"], { error: "must be true or false" }).optional(),
  NATS_TLS_CA_FILE: z.string().min(1, "must name a PEM file").optional(),
  NATS_TLS_CERT_FILE: z.string().min(1, "must name a PEM file").optional(),
  NATS_TLS_KEY_FILE: z.string().min(1, "must name a PEM file").optional(),
  KUBECONFIG: z.string().optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(", ")}` }).default("info"),
  HTTP_PORT: z.coerce
    .number({ error: "must be a port number" })
    .int("must be a port number")
    .min(0, "must be between 0 and 65535")
    .max(65535, "must be between 0 and 65535")
    .default(8080),
  POD_NAME: z.string().optional(),
  /** Where Events about cluster-scoped objects (TenantClusters) are written. */
  EVENTS_NAMESPACE: z.string().min(1, "must name a namespace").default("default"),
});
export type CommonEnv = z.infer<typeof CommonEnvSchema>;
