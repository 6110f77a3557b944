// @peculiar/x509 resolves its algorithm providers through tsyringe, which refuses to load
// unless the (never standardised) Reflect metadata API exists. This installs the small
// subset tsyringe calls, only when no full polyfill is present. Import it before the library.

type MetadataKey = unknown;
type Target = object;
type Store = Map<PropertyKey | undefined, Map<MetadataKey, unknown>>;

interface ReflectMetadata {
  defineMetadata(key: MetadataKey, value: unknown, target: Target, property?: PropertyKey): void;
  getOwnMetadata(key: MetadataKey, target: Target, property?: PropertyKey): unknown;
  getMetadata(key: MetadataKey, target: Target, property?: PropertyKey): unknown;
  metadata(key: MetadataKey, value: unknown): (target: Target, property?: PropertyKey) => void;
}

const reflect = Reflect as typeof Reflect & Partial<ReflectMetadata>;

if (typeof reflect.getMetadata !== "function") {
  const stores = new WeakMap<Target, Store>();
  const ownMap = (target: Target, property: PropertyKey | undefined, create: boolean) => {
    let store = stores.get(target);
    if (!store) {
      if (!create) return undefined;
      store = new Map();
      stores.set(target, store);
    }
    let entries = store.get(property);
    if (!entries && create) {
      entries = new Map();
      store.set(property, entries);
    }
    return entries;
  };
  const shim: ReflectMetadata = {
    defineMetadata(key, value, target, property) {
      ownMap(target, property, true)?.set(key, value);
    },
    getOwnMetadata(key, target, property) {
      return ownMap(target, property, false)?.get(key);
    },
    getMetadata(key, target, property) {
      for (let t: Target | null = target; t !== null; t = Object.getPrototypeOf(t) as Target | null) {
        const entries = ownMap(t, property, false);
        if (entries?.has(key)) return entries.get(key);
      }
      return undefined;
    },
    metadata(key, value) {
      return (target, property) => shim.defineMetadata(key, value, target, property);
    },
  };
  Object.assign(reflect, shim);
}

export {};
