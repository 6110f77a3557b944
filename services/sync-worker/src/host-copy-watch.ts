import type { ListWatch, ListWatchOptions } from "@tenantplane/kube";
import { LABEL_KIND } from "@tenantplane/mapping";
import type { SharedWatches } from "./shared-watches.js";
import { isPayloadKind } from "./tenant-limits.js";

/** Metadata is about a kilobyte an object: pages as large as the API server's default. */
const METADATA_PAGE_SIZE = 500;

/**
 * The worker's view of one kind of host object in a tenant's namespace. For ConfigMaps and
 * Secrets it is two watches under one cache: the sync copies (they carry {@link LABEL_KIND})
 * as metadata only, and tenantplane's own objects of the kind (DNS records, Pod token Secrets:
 * no such label) whole, since their writers read them. The planner compares a copy's content
 * hash annotation, never its data, and every write sends the whole desired object, so a
 * megabyte copy would be encoded by the host API server and read by the worker on each list
 * and each change only to be dropped. An object whose label is added or removed on the host
 * leaves one watch (a delete) and enters the other (an add); a handler that re-reads the view
 * sees it in one of the two once both events are in.
 */
export function openHostWatch(watches: SharedWatches, opts: ListWatchOptions & { labelSelector: string }): ListWatch {
  if (!isPayloadKind(opts.kind)) return watches.open(opts);
  const copies = watches.open({
    ...opts,
    labelSelector: `${opts.labelSelector},${LABEL_KIND}`,
    metadataOnly: true,
    pageSize: METADATA_PAGE_SIZE,
    logger: opts.logger.child({ form: "metadata" }),
  });
  const own = watches.open({ ...opts, labelSelector: `${opts.labelSelector},!${LABEL_KIND}` });
  return unionWatch(copies, own);
}

/**
 * Two watches of disjoint selections read as one: an object is looked up in the first, then the
 * second; the view is current only while both are.
 */
export function unionWatch(first: ListWatch, second: ListWatch): ListWatch {
  return {
    get: (namespace, name) => first.get(namespace, name) ?? second.get(namespace, name),
    list: () => [...first.list(), ...second.list()],
    current: () => first.current() && second.current(),
    synced: Promise.all([first.synced, second.synced]).then(() => undefined),
    reconsider: (obj) => first.reconsider(obj) || second.reconsider(obj),
    stop: () => {
      first.stop();
      second.stop();
    },
  };
}
