#!/usr/bin/env node
// The installed entry point. It exists before the first build, so `npm ci` can link it
// into node_modules/.bin (npm skips bins whose target is missing); the CLI itself is the
// compiled dist/main.js.
try {
  await import("../dist/main.js");
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
  const detail = String(error.message).split("\n")[0];
  process.stderr.write(`tenantplane: not built yet (${detail}); run \`npm run build\` in the repository first\n`);
  process.exitCode = 1;
}
