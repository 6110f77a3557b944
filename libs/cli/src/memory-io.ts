import type { CliIo } from "./cli-io.js";

/** An in-memory {@link CliIo} (for tests and embedding): output is collected, files come from `files`. */
export function memoryIo(options: Partial<CliIo> & { files?: Record<string, string> } = {}) {
  const out = { stdout: "", stderr: "" };
  const { files = {}, ...rest } = options;
  const io: CliIo = {
    stdout: (text) => void (out.stdout += text),
    stderr: (text) => void (out.stderr += text),
    readFile: async (path) => {
      const text = files[path];
      if (text === undefined) throw Object.assign(new Error(`ENOENT: no such file ${path}`), { code: "ENOENT" });
      return text;
    },
    now: () => new Date("2026-05-01T12:00:00.000Z"),
    ...rest,
  };
  return { io, out };
}
