// @peculiar/x509 registers its algorithm providers with tsyringe, which throws at import time
// unless Reflect's metadata API exists. x509 never defines metadata itself, so a per-target
// store covering the three calls tsyringe makes is enough. Must be imported before x509.

type MetadataStore = Map<unknown, unknown>;
const stores = new WeakMap<object, MetadataStore>();
const reflect = Reflect as typeof Reflect & Record<string, unknown>;

if (typeof reflect["getMetadata"] !== "function") {
  const own = (key: unknown, target: object) => stores.get(target)?.get(key);
  Object.assign(reflect, {
    getOwnMetadata: own,
    getMetadata(key: unknown, target: object): unknown {
      for (let t: object | null = target; t !== null; t = Object.getPrototypeOf(t) as object | null) {
        if (stores.get(t)?.has(key)) return own(key, t);
      }
      return undefined;
    },
    defineMetadata(key: unknown, value: unknown, target: object): void {
      const store = stores.get(target) ?? new Map<unknown, unknown>();
      store.set(key, value);
      stores.set(target, store);
    },
  });
}

export {};
