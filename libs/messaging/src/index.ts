export * from "./decision.js";
export * from "./tenant-change.js";
export * from "./subjects.js";
export {
  connectNats,
  compareVersions,
  MIN_SERVER_VERSION,
  ServerVersionError,
  type NatsOptions,
} from "./connection.js";
export {
  consumers,
  ensureTopology,
  tenantsStreamConfig,
  decisionsStreamConfig,
  type ConsumerName,
} from "./topology.js";
export { settlementFor, type Settlement } from "./settlement.js";
export { runConsumer, type ConsumerOptions, type MessageContext, type Rejection } from "./consumer.js";
export { publishDecision, publishTenantChange, stampDecision } from "./publisher.js";
