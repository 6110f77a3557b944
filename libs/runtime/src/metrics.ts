import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** The metrics every service exports, on a private registry so tests and libraries never collide. */
export interface ServiceMetrics {
  readonly registry: Registry;
  /** Message outcomes: ack, nak, term, superseded (acked unhandled: a newer message for the key exists). */
  readonly messages: Counter<"outcome">;
  /** Decisions published, by action. */
  readonly decisions: Counter<"action">;
  /** Time spent handling one message, by outcome. */
  readonly handleSeconds: Histogram<"outcome">;
}

/** Creates the registry with process metrics and the shared tenantplane_ metrics. */
export function createMetrics(service: string): ServiceMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, prefix: "tenantplane_" });
  return {
    registry,
    messages: new Counter({
      name: "tenantplane_messages_total",
      help: "Messages handled, by outcome (ack, nak, term, superseded).",
      labelNames: ["outcome"],
      registers: [registry],
    }),
    decisions: new Counter({
      name: "tenantplane_decisions_total",
      help: "Decisions published, by action.",
      labelNames: ["action"],
      registers: [registry],
    }),
    handleSeconds: new Histogram({
      name: "tenantplane_handle_duration_seconds",
      help: "Time to handle one message, by outcome.",
      labelNames: ["outcome"],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
  };
}
