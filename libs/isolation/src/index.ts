export * from "./constants.js";
export * from "./kube-objects.js";
export { isolationLabels, isolationObjectSelector } from "./metadata.js";
export { podSecurityLabels } from "./pod-security.js";
export { CLUSTER_DNS_PEER, NAMESPACE_NAME_LABEL } from "./network-policies.js";
export * from "./compile.js";
export * from "./ownership.js";
export * from "./profile-choice.js";
export * from "./control-plane-share.js";
