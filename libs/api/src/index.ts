export * from "./constants.js";
export * from "./quantity.js";
export * from "./crd-manifests.js";
export * from "./sync-policy.js";
