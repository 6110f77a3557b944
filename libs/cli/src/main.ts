#!/usr/bin/env node
import { readFile } from "node:fs/promises";
import { text } from "node:stream/consumers";
import { runCli } from "./cli.js";
import { colorEnabled } from "./cli-io.js";

// Ctrl-C ends following commands cleanly (exit 0); a second one kills at once.
const interrupt = new AbortController();
process.once("SIGINT", () => {
  interrupt.abort();
  process.once("SIGINT", () => process.exit(130));
});

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: (chunk) => process.stdout.write(chunk),
  stderr: (chunk) => process.stderr.write(chunk),
  readFile: (path) => (path === "-" ? text(process.stdin) : readFile(path, "utf8")),
  now: () => new Date(),
  debug: process.env["TENANTPLANE_DEBUG"] === "1",
  env: process.env,
  color: colorEnabled(process.stdout.isTTY === true, process.env),
  signal: interrupt.signal,
});
