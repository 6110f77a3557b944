export * from "./content-hash.js";
export * from "./kube-object.js";
export * from "./malformed-object-error.js";
export * from "./plan.js";
export * from "./system-objects.js";
export * from "./transform.js";
export * from "./host-rules.js";
export * from "./check-host-rules.js";
