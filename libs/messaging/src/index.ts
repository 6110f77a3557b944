export * from "./decision.js";
export * from "./tenant-change.js";
export * from "./subjects.js";
export {
  connectNats,
  connectedAfter,
  compareVersions,
  loggableServers,
  natsConnectionOptions,
  natsServers,
  natsTlsOptions,
  NatsOptionsError,
  trackConnection,
  type ConnectionState,
  MIN_SERVER_VERSION,
  ServerVersionError,
  type NatsOptions,
} from "./connection.js";
export {
  ACK_WAIT_MS,
  MAX_DELIVER,
  StreamEnvSchema,
  consumerConfig,
  consumers,
  decisionsStreamConfig,
  DECISIONS_PER_SUBJECT,
  ensureTopology,
  type StoredStreams,
  streamSettingsFromEnv,
  tenantsStreamConfig,
  type ConsumerName,
  type StreamSettings,
} from "./topology.js";
export { streamUpdate, type StreamLimits } from "./stream-settings.js";
export { isJetStreamUnavailable, whenJetStreamAnswers, type JetStreamWaitOptions } from "./jetstream-ready.js";
export { settlementFor, UNCLASSIFIED_RETRY_LIMIT, type Settlement } from "./settlement.js";
export {
  heartbeatInterval,
  LocalWork,
  runConsumer,
  type ConsumerOptions,
  type ConsumerRef,
  type MessageContext,
  type Rejection,
} from "./consumer.js";
export { decisionId, publishDecision, publishTenantChange, stampDecision, type StampedDecision } from "./publisher.js";
export { DecisionPipeline, type DecisionPipelineOptions } from "./decision-pipeline.js";
export { boundedText, MAX_DECISION_TEXT, TRUNCATED } from "./bounded-text.js";
