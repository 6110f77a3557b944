import v8 from "node:v8";
const modules = JSON.parse(process.argv[2]);
for (const m of modules) await import(m);
await new Promise((r) => setTimeout(r, 300));
globalThis.gc(); globalThis.gc();
const mu = process.memoryUsage();
const f = (b) => (b/1048576).toFixed(1);
const spaces = v8.getHeapSpaceStatistics().map(s => `${s.space_name.replace("_space","")}:${f(s.space_used_size)}/${f(s.physical_space_size)}`).join(" ");
console.log(process.env.TAG ?? "", modules.join("+") || "bare", "rss", f(mu.rss), "heapTotal", f(mu.heapTotal), "used", f(mu.heapUsed), "ext", f(mu.external), spaces);
