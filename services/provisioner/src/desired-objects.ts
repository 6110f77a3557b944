// The provisioner's desired objects, as pure functions: the only part of the
// service other packages may import, so tests can check what reaches the API server.
export {
  apiService,
  controlPlaneStatefulSet,
  headlessService,
  hostNamespaceManifest,
  TENANT_CONTROLLERS,
  type ControlPlaneSource,
} from "./control-plane.js";
export { buildKubeconfig, kubeconfigSecret } from "./kubeconfig.js";
export { pkiSecret } from "./pki-secret.js";
export { generateTenantPki, signClientCertificate } from "./pki.js";
