import { unitTestConfig } from "../../vitest.shared.js";

export default unitTestConfig;
