import { pino, type DestinationStream, type Logger, type LevelWithSilent } from "pino";

export type { Logger } from "pino";

/**
 * Paths pino censors in every log line. Secrets are kept out by configuration,
 * not by care at each call site: anything named like key material is redacted.
 */
export const REDACT_PATHS = [
  "kubeconfig",
  "*.kubeconfig",
  "token",
  "*.token",
  "password",
  "*.password",
  "keyPem",
  "*.keyPem",
  "*.*.keyPem",
  "data",
  "*.data",
  "stringData",
  "*.stringData",
  "headers.authorization",
  "*.headers.authorization",
  "err.config",
  "err.options",
];

/** The one root logger of a service: JSON to stdout, `service` on every line, secrets redacted. */
export function createLogger(
  service: string,
  level: LevelWithSilent = "info",
  destination?: DestinationStream,
): Logger {
  const options = {
    level,
    base: { service },
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return destination ? pino(options, destination) : pino(options);
}
