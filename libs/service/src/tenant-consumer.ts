import { API_VERSION, KIND_TENANT_CLUSTER } from "@tenantplane/api";
import { hostNamespaceFor } from "@tenantplane/mapping";
import {
  LocalWork,
  runConsumer,
  TenantChangeSchema,
  type ConsumerName,
  type TenantChange,
} from "@tenantplane/messaging";
import { httpStatusOf, TransientError, type Logger } from "@tenantplane/runtime";
import { accessDenialOf, apiRefusalOf } from "./api-refusal.js";
import { reportApiRefusal, type RefusalReporting } from "./refusal-status.js";
import { warnOnRejection } from "./rejections.js";
import type { ServiceContext } from "./service.js";

/** First retry delay while a service's access to a tenant namespace is not in force yet. */
const ACCESS_RETRY_MS = 1_000;

/**
 * Feeds tenant-change keys from `consumer` to `reconcile`, one tenant at a time
 * per tenant, until shutdown. Rejected messages become Warning Events on their
 * tenant; the ack/nak/term choice is the messaging library's.
 *
 * With `refusals`, a write the API server refuses (422, 400, 403, 413) is not a
 * rejected message but a fact about the tenant's input: the service's condition
 * goes False with the server's message, phase Failed, a Warning names the field,
 * and the message is settled, since only a change of the input can help (and
 * brings a new message).
 *
 * The authorizer's 403 in the tenant's host namespace is neither: the service's RoleBinding
 * there is created by the provisioner right after the namespace and may not be in force yet,
 * so the tenant is retried (every ACCESS_RETRY_MS at first, slower the longer it lasts) and
 * no condition changes.
 *
 * `wake(tenant)` runs a pass for the tenant in its turn without a message (a watch event saw
 * something change): at most `concurrency` tenants are reconciled at once (default: the
 * service's RECONCILE_CONCURRENCY).
 */
export function consumeTenantChanges<E>(
  svc: ServiceContext<E>,
  consumer: ConsumerName,
  reconcile: (tenant: string, logger: Logger) => Promise<void>,
  refusals?: RefusalReporting,
  options: { concurrency?: number } = {},
): { wake: (tenant: string) => void } {
  const local = new LocalWork<TenantChange>();
  const consuming = runConsumer({
    js: svc.js,
    consumer,
    schema: TenantChangeSchema,
    key: (change) => change.tenant,
    logger: svc.logger,
    metrics: svc.metrics,
    signal: svc.signal,
    onReady: svc.setReady,
    supersede: true,
    local,
    concurrency: options.concurrency ?? svc.concurrency,
    onRejected: warnOnRejection(svc.events, svc.objects, svc.name, svc.logger),
    handle: async (change, ctx) => {
      try {
        await reconcile(change.tenant, ctx.logger);
      } catch (err) {
        // A TenantCluster that went away during the pass (its teardown finished) leaves nothing to do.
        if (httpStatusOf(err) === 404 && !(await tenantExists(svc, change.tenant))) {
          ctx.logger.debug({ tenant: change.tenant }, "TenantCluster gone during the pass");
          return;
        }
        const denial = accessDenialOf(err);
        if (denial?.namespace === hostNamespaceFor(change.tenant)) {
          throw new TransientError(`${denial.message}; waiting for this service's RoleBinding in ${denial.namespace}`, {
            code: "AccessPending",
            retryAfterMs: ACCESS_RETRY_MS,
            cause: err,
          });
        }
        const refusal = refusals && apiRefusalOf(err);
        if (!refusal) throw err;
        ctx.logger.warn(
          { object: refusal.object, fields: refusal.fields, code: refusal.code },
          "API server refused a write",
        );
        // A failed report (a transient API error) is retried like any other failure.
        await reportApiRefusal(svc, change.tenant, refusal, refusals);
      }
    },
  });
  svc.onShutdown({ name: "consumer", run: () => consuming });
  const wake = (tenant: string) => local.fire({ tenant, reason: "TenantChanged" });
  void wakeKnownTenants(svc, wake);
  return { wake };
}

/**
 * One pass per TenantCluster the cache holds, once it is filled. A change this service held
 * unsettled when it last stopped (killed mid-pass) is redelivered only after ack_wait, and no
 * watch event says anything changed: without this its successor would leave the tenant as the
 * crash left it until then. A pass that finds everything in place writes nothing.
 */
async function wakeKnownTenants<E>(svc: ServiceContext<E>, wake: (tenant: string) => void): Promise<void> {
  const cache = svc.cache;
  if (cache === undefined) return;
  await cache.synced();
  if (svc.signal.aborted) return;
  for (const tc of cache.list(API_VERSION, KIND_TENANT_CLUSTER) ?? []) {
    if (tc.metadata?.name) wake(tc.metadata.name);
  }
}

async function tenantExists(svc: ServiceContext<unknown>, tenant: string): Promise<boolean> {
  return (await svc.objects.get(API_VERSION, KIND_TENANT_CLUSTER, tenant, undefined, { fresh: true })) !== undefined;
}
