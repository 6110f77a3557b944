export * from "./errors.js";
export * from "./abort.js";
export * from "./backoff.js";
export * from "./logger.js";
export * from "./config.js";
export * from "./metrics.js";
export * from "./http-server.js";
export * from "./shutdown.js";
