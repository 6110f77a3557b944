// Preloaded into a sync worker by bench/sync-throughput.ts (`NODE_OPTIONS=--import <this file>`;
// Node refuses --cpu-prof there): the first SIGUSR2 starts V8's CPU profiler inside the process,
// the next stops it and writes the profile to $CPU_PROFILE_PATH, so the profile covers exactly the
// window the bench measures; SIGWINCH collects garbage (below). Without CPU_PROFILE_PATH it does nothing and the worker is unchanged.
import { renameSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import process from "node:process";

const path = process.env.CPU_PROFILE_PATH;
if (path) {
  const session = new Session();
  session.connect();
  const post = (method, params = {}) =>
    new Promise((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
  let running = false;
  process.on("SIGUSR2", () => {
    running = !running;
    const step = running
      ? post("Profiler.enable")
          .then(() => post("Profiler.setSamplingInterval", { interval: 1000 }))
          .then(() => post("Profiler.start"))
      : post("Profiler.stop").then(({ profile }) => {
          // Written whole, then renamed: the bench never reads half a profile.
          writeFileSync(`${path}.tmp`, JSON.stringify(profile));
          renameSync(`${path}.tmp`, path);
        });
    step.catch((err) => process.stderr.write(`cpu-profiler: ${String(err)}\n`));
  });
  // SIGWINCH runs a full garbage collection, so a heap reading right after it is the live heap
  // (an idle process may not collect for minutes, and two readings then differ by its garbage).
  process.on("SIGWINCH", () => {
    post("HeapProfiler.collectGarbage").catch((err) => process.stderr.write(`cpu-profiler: ${String(err)}\n`));
  });
}
