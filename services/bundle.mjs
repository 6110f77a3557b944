// Bundles one service (run from its directory, after tsc) into dist/bundle/main.js: what the
// image and the test harness run. Why a bundle: a service idles at a small multiple of a bare
// Node.js process only when it does not load code it never runs, and most of that code sits
// in @kubernetes/client-node, whose every entry point (KubeConfig's module included) imports
// its generated client: all typed API classes and about a thousand models. Bundled with that
// package marked free of side effects, only the modules KubeConfig really reaches are kept.
// bench/footprint.ts measures the unbundled dist/main.js against this bundle.
import { rmSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

// Optional native helpers and encoders that ws and node-fetch try to require inside try/catch;
// left to run-time resolution, where their absence is expected and handled.
const OPTIONAL = ["bufferutil", "utf-8-validate", "encoding"];

/**
 * node-fetch 2 (KubeConfig's dependency) takes `URL` from node:url and falls back to the
 * whatwg-url package only where node:url has none, which no supported Node.js is; that
 * package would still load its 300 KB Unicode mapping table at start.
 */
const whatwgUrlFromNode = {
  name: "whatwg-url-from-node",
  setup(b) {
    b.onResolve({ filter: /^whatwg-url$/ }, () => ({ path: "whatwg-url", namespace: "node-url" }));
    b.onLoad({ filter: /.*/, namespace: "node-url" }, () => ({
      contents: 'import { URL } from "node:url"; export default { URL }; export { URL };',
      loader: "js",
    }));
  },
};

/** Marks @kubernetes/client-node's modules side-effect free, so unused ones are dropped whole. */
const clientNodeWithoutSideEffects = {
  name: "client-node-without-side-effects",
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === "resolved") return undefined;
      const resolved = await b.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: "resolved",
      });
      if (resolved.errors.length > 0 || !resolved.path.includes("/node_modules/@kubernetes/client-node/")) {
        return undefined;
      }
      return { ...resolved, sideEffects: false };
    });
  },
};

// Chunk names carry a content hash: start empty so no stale chunk lingers.
rmSync("dist/bundle", { recursive: true, force: true });
const result = await build({
  entryPoints: { main: "dist/main.js" },
  outdir: "dist/bundle",
  bundle: true,
  // A dynamic import, where a service has one, becomes a chunk loaded on first use.
  splitting: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // Whitespace and comments go (a comment with one character beyond Latin-1 would make V8 hold
  // the whole source as a two-byte string); names stay as written, as logs and errors show them,
  // and the source map in dist/bundle maps positions back (node --enable-source-maps).
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  sourcemap: "linked",
  external: OPTIONAL,
  plugins: [whatwgUrlFromNode, clientNodeWithoutSideEffects],
  metafile: true,
  logLevel: "warning",
  // CommonJS dependencies inside an ES module bundle still call require() and read __dirname.
  banner: {
    js: [
      'import { createRequire as __bundleRequire } from "node:module";',
      'import { fileURLToPath as __bundleFileURLToPath } from "node:url";',
      "const require = __bundleRequire(import.meta.url);",
      "const __filename = __bundleFileURLToPath(import.meta.url);",
      'const __dirname = __bundleFileURLToPath(new URL(".", import.meta.url));',
    ].join("\n"),
  },
});
// What went into the bundle, for `npx esbuild --analyze`-style questions (e.g. esbuild.github.io/analyze).
writeFileSync("dist/bundle/meta.json", JSON.stringify(result.metafile));

// One typed API class (CoreV1Api, CustomObjectsApi, makeInformer's list) brings back the
// ObjectSerializer and every model, about 50 MiB idle: services talk to the API through
// @tenantplane/kube's JsonClient and import only types from the generated client.
const generated = Object.values(result.metafile.outputs)
  .flatMap((output) => Object.keys(output.inputs))
  .filter((input) => /@kubernetes\/client-node\/dist\/gen\/(apis|models)\//.test(input));
if (generated.length > 0) {
  process.stderr.write(
    `the bundle holds @kubernetes/client-node's generated API classes or models (${generated.length} files, ` +
      `e.g. ${generated[0]}): use JsonClient from @tenantplane/kube instead of a typed API at run time\n`,
  );
  process.exit(1);
}
