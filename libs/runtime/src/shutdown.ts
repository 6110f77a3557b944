import type { Logger } from "pino";

/** One named step of a graceful shutdown, run in registration order. */
export interface ShutdownStep {
  name: string;
  run: () => Promise<void> | void;
}

/**
 * Installs SIGTERM/SIGINT handlers that run the steps in order (stop watching,
 * stop consuming, finish in-flight work, drain NATS) and exit 0, or exit 1 if
 * they have not finished within `timeoutMs`. A second signal exits at once.
 */
export function handleShutdown(logger: Logger, steps: ShutdownStep[], timeoutMs = 25_000): AbortSignal {
  const controller = new AbortController();
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    stopping = true;
    controller.abort();
    logger.info({ signal }, "shutting down");
    const timer = setTimeout(() => {
      logger.error({ timeoutMs }, "shutdown timed out");
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    void (async () => {
      for (const step of steps) {
        try {
          await step.run();
        } catch (err) {
          logger.warn({ err, step: step.name }, "shutdown step failed");
        }
      }
      logger.info("stopped");
      process.exit(0);
    })();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  return controller.signal;
}
