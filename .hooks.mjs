export async function resolve(specifier, context, next) {
  if (specifier === "./gen/index.js" && context.parentURL?.endsWith("/@kubernetes/client-node/dist/config.js")) {
    return { url: new URL("./.gen-shim.mjs", import.meta.url).href, shortCircuit: true };
  }
  return next(specifier, context);
}
