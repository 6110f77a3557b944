import { runCli } from "./src/cli.js";
import { readFile } from "node:fs/promises";
const code = await runCli(process.argv.slice(2), {
  stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t),
  readFile: (p) => readFile(p, "utf8"), now: () => new Date(), env: process.env,
});
process.exitCode = code;
