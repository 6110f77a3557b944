export * from "./decision.js";
export * from "./tenant-change.js";
export * from "./subjects.js";
