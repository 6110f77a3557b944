import { readFileSync } from "node:fs";

/** A memory line of a process's /proc status (VmRSS now, VmHWM its peak), in MiB; 0 when absent. */
export function procStatusMib(pid: number, field: "VmHWM" | "VmRSS"): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${field}:`));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}
