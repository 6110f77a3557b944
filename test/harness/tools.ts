import { join } from "node:path";
import { inject } from "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** Directory holding the pinned `cluster`, `kwok`, `helm`, `nats-server` and `coredns` binaries. */
    toolsDir: string;
  }
}

/** The tools directory the global setup built, or `explicit` when given. */
export function toolsDir(explicit?: string): string {
  return explicit ?? inject("toolsDir");
}

/** Path of a pinned binary (`cluster`, `kwok`, `helm`, `nats-server`, `coredns`) in the tools directory. */
export function toolPath(name: "cluster" | "kwok" | "helm" | "nats-server" | "coredns", dir?: string): string {
  return join(toolsDir(dir), name);
}
