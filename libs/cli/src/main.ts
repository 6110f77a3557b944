#!/usr/bin/env node
import { readFile } from "node:fs/promises";
import { text } from "node:stream/consumers";
import { runCli } from "./cli.js";

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: (chunk) => process.stdout.write(chunk),
  stderr: (chunk) => process.stderr.write(chunk),
  readFile: (path) => (path === "-" ? text(process.stdin) : readFile(path, "utf8")),
  now: () => new Date(),
  debug: process.env["TENANTPLANE_DEBUG"] === "1",
});
