export { createArtifactsDir, releaseArtifactsDir, artifactsRoot, type StopOptions } from "./artifacts.js";
export { installCrds, harnessFieldManager } from "./crds.js";
export { startHostCluster, type HostCluster, type HostClusterOptions } from "./host-cluster.js";
export { httpsGet, type TlsClientOptions } from "./https.js";
export { kubeConfigFrom, kubeconfigYaml, type KubeconfigParams } from "./kubeconfig.js";
export { kwokNodeAnnotation } from "./kwok.js";
export { setLoadBalancerIngress } from "./load-balancer.js";
export { startNats, type NatsOptions, type NatsServer } from "./nats.js";
export {
  startNatsCluster,
  type NatsCluster,
  type NatsClusterNode,
  type NatsClusterOptions,
  type StopNodeOptions,
} from "./nats-cluster.js";
export { generateCa, generatePrivateKeyPem, signLeaf, type KeyPairPem, type LeafOptions } from "./pki.js";
export { canConnect, freePort, stablePort } from "./ports.js";
export { liveProcesses, logTail, type ManagedProcess } from "./process.js";
export { trackFailures, type FailureTracker } from "./failure-tracker.js";
export { startTenantApiServer, type TenantApiServer, type TenantApiServerOptions } from "./tenant-api-server.js";
export { buildTools } from "./build-tools.js";
export { toolPath, toolsDir } from "./tools.js";
export { defaultStorageClassName, testProvisionerName } from "./volume-provisioner.js";
export { StopWaiting, waitFor, type WaitForOptions } from "./wait-for.js";
export { ServiceFleet, type RunningService, type ServiceEntry, type ServiceName } from "./services.js";
export { startTenantStandIn } from "./tenant-stand-in.js";
export {
  provisionTenant,
  syncedState,
  tenantJsonClient,
  tenantKubeconfig,
  waitForSynced,
  waitForTenantServiceAccount,
  type SyncTenant,
  type SyncedState,
} from "./tenant-sync.js";
export { fieldsNotStored } from "./stored-fields.js";
export { serviceAccountKubeConfig, serviceAccountKubeconfigFile } from "./service-account.js";
export { runTenantplane, type CliRun } from "./cli.js";
export { agentOf, isWrite, readAudit, WRITE_VERBS, type AuditRequest } from "./audit.js";
export { consumersSettled, describeRequests, requestsOfResync } from "./resync-audit.js";
export { dnsResolver, resolveWithSearch, startCoreDns, type CoreDns, type ResolvConf } from "./coredns.js";
export { requestOutcome, type RequestOutcome } from "./request-outcome.js";
export {
  DISABLE_SCHEDULER_FLAG,
  followTenantScheduler,
  type TenantSchedulerFollower,
  type TenantSchedulerOptions,
} from "./tenant-scheduler.js";
export {
  caHashOf,
  createPrivateNode,
  PRIVATE_NODE_ANNOTATION_VALUE,
  readJoinCredential,
  selfSubjectReview,
  startTenantKwok,
  type JoinCredential,
  type ReviewedUser,
  type TenantKwok,
} from "./tenant-nodes.js";
export { isAvailable, sampleMinimum, type MinimumSampler, type PodReadiness } from "./availability.js";
