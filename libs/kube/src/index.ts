export { loadKubeConfig, kubeConfigFromString } from "./kubeconfig.js";
export { Objects } from "./apply.js";
export { ApiError, KubeApiError, type ApiStatus, type RequestTarget, type StatusCause } from "./api-error.js";
export { EventRecorder, type RecordOutcome } from "./event-recorder.js";
export {
  AggregatedEvents,
  jsonEventSink,
  type AggregatedEventsOptions,
  type EventInput,
  type EventOutcome,
  type EventSink,
  type Regarding,
} from "./aggregated-events.js";
export { LeadershipLostError, runWithLeaderElection, type LeaderElectionOptions } from "./leader-election.js";
export {
  JsonClient,
  METADATA_ONLY,
  METADATA_ONLY_LIST,
  resourcePath,
  type JsonClientOptions,
  type JsonRequest,
  type Query,
} from "./json-client.js";
export {
  startListWatch,
  type ListWatch,
  type ListWatchOptions,
  type RawObject,
  type RawWatchEvent,
} from "./list-watch.js";
export {
  ObjectCache,
  matchesSelector,
  type CacheEvent,
  type CachedKind,
  type NamespaceWatches,
  type ObjectCacheOptions,
} from "./object-cache.js";
export { mayWatchEverywhere } from "./access-review.js";
export { RequestBudget, TokenBucket } from "./token-bucket.js";
export { olderVersion } from "./resource-version.js";
