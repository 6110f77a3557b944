import type { JsonClient, ListWatch, RawObject, RawWatchEvent } from "@tenantplane/kube";
import type { Logger } from "@tenantplane/runtime";
import { LABEL_VIRTUAL_NODE } from "./back-sync/nodes.js";
import type { SharedWatches } from "./shared-watches.js";

/**
 * Every Node of a tenant's API, name and labels only (a Node's status, with its image list,
 * is large and nobody here reads it), one watch shared by the syncer, back-sync and the
 * migration driver, so all three tell the tenant's own nodes from virtual ones alike.
 */
export function openTenantNodes(
  watches: SharedWatches,
  client: JsonClient,
  logger: Logger,
  onEvent: (event: RawWatchEvent) => void,
): ListWatch {
  return watches.open({
    client,
    path: "/api/v1/nodes",
    apiVersion: "v1",
    kind: "Node",
    logger: logger.child({ side: "tenant", kind: "Node" }),
    transform: leanNode,
    onEvent,
  });
}

/** The parts of a tenant Node kept in the cache. */
export function leanNode(node: RawObject): RawObject {
  const { name, namespace, uid, resourceVersion, labels } = node.metadata;
  return {
    apiVersion: node.apiVersion,
    kind: node.kind,
    metadata: {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      ...(uid === undefined ? {} : { uid }),
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
      ...(labels === undefined ? {} : { labels }),
    },
  };
}

/**
 * Whether a tenant Node event can change how the Pods bound to it are judged: a Node that came
 * or went, or whose virtual-node label changed (all the judgement reads). Every other update
 * (its status, the heartbeat-driven conditions, the tenant controllers' annotations) would only
 * queue each of its Pods to find it in sync: with a hundred Pods on a node, a hundred keys.
 */
export function judgesPodsAgain(event: RawWatchEvent): boolean {
  if (event.type !== "update" || event.previous === undefined) return true;
  return event.previous.metadata.labels?.[LABEL_VIRTUAL_NODE] !== event.object.metadata.labels?.[LABEL_VIRTUAL_NODE];
}

/**
 * Names of the tenant's own Nodes: every Node in its API without the virtual-node label, that
 * is, nodes joined to the tenant's API (Private mode). tenantplane never touches them, nor
 * the Pods bound to them.
 */
export function privateNodeNames(nodes: readonly RawObject[]): Set<string> {
  const names = new Set<string>();
  for (const node of nodes) {
    if (node.metadata.labels?.[LABEL_VIRTUAL_NODE] !== "true") names.add(node.metadata.name);
  }
  return names;
}
