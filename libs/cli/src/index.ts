export * from "./cli.js";
export * from "./cli-io.js";
export * from "./explain-sync.js";
export * from "./format.js";
export * from "./read-manifests.js";
export * from "./read-policy.js";
