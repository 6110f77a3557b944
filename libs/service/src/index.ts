export { startService, type ServiceContext } from "./service.js";
