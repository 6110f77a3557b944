export { createConfiguration } from "@kubernetes/client-node/dist/gen/configuration.js";
export { ServerConfiguration } from "@kubernetes/client-node/dist/gen/servers.js";
