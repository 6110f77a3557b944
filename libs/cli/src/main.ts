#!/usr/bin/env node
import { readFile } from "node:fs/promises";
import { text } from "node:stream/consumers";
import { runCli } from "./cli.js";
import { colorEnabled } from "./cli-io.js";

// Ctrl-C ends following commands cleanly (exit 0); a second one ends the process at once.
const interrupt = new AbortController();
// A command that follows nothing (a request in flight) is ended after a moment.
process.once("SIGINT", () => {
  interrupt.abort();
  setTimeout(() => process.exit(130), 1000).unref();
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
