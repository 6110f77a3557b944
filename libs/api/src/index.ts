export * from "./sync-policy.js";
