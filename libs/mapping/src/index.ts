export * from "./constants.js";
export * from "./host-name.js";
export * from "./label-value.js";
export * from "./reverse-mapping.js";
export * from "./dns-label.js";
export * from "./tenant-services.js";
export * from "./storage-class-copy.js";
