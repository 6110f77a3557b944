// The provisioner's desired objects, as pure functions: the only part of the
// service other packages may import, so tests can check what reaches the API server.
export {
  apiService,
  controlPlaneStatefulSet,
  headlessService,
  hostNamespaceManifest,
  modeDependentArgs,
  PRIVATE_TENANT_CONTROLLERS,
  TENANT_CONTROLLERS,
  type ControlPlaneSource,
} from "./control-plane.js";
export {
  bootstrapTokenSecret,
  caHash,
  joinSecret,
  joinSecretName,
  k3sJoinToken,
  parseK3sJoinToken,
  JOIN_KEYS,
} from "./join-credential.js";
export { buildKubeconfig, kubeconfigSecret } from "./kubeconfig.js";
export { pkiSecret } from "./pki-secret.js";
export { generateTenantPki, signClientCertificate } from "./pki.js";
