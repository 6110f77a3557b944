import { CommonEnvSchema } from "@tenantplane/runtime";
import * as z from "zod";
import { parseTenantRoleGrants } from "./role-bindings.js";

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(?:\d+(?:s|m|h|d))+$/;

/** Parses a duration such as `8760h`, `30d` or `1h30m` into milliseconds; undefined if malformed or zero. */
export function parseDuration(text: string): number | undefined {
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+)(s|m|h|d)/g)) total += Number(amount) * UNIT_MS[unit!]!;
  return total > 0 ? total : undefined;
}

const DURATION_MESSAGE = "must be a positive duration such as 8760h, 30d or 90s";

/**
 * The provisioner's environment: the common variables, the admin certificate lifetime and the
 * RoleBindings it creates in each tenant namespace.
 */
export const ProvisionerEnvSchema = CommonEnvSchema.extend({
  /**
   * Lifetime of each admin kubeconfig's client certificate (default one year); the provisioner
   * renews it after two thirds of it.
   */
  ADMIN_CERT_LIFETIME: z
    .string()
    .default("8760h")
    .transform((text, ctx) => {
      const ms = parseDuration(text);
      if (ms === undefined) {
        ctx.addIssue({ code: "custom", message: DURATION_MESSAGE });
        return z.NEVER;
      }
      return ms;
    }),
  /**
   * `<clusterRole>=<namespace>/<serviceAccount>,…`: in every tenant namespace, bind each
   * ServiceAccount to its fixed ClusterRole (the chart sets this). Empty binds nothing, for
   * services that hold their rights cluster-wide.
   */
  TENANT_ROLE_BINDINGS: z
    .string()
    .default("")
    .transform((text, ctx) => {
      const grants = parseTenantRoleGrants(text);
      if (typeof grants === "string") {
        ctx.addIssue({ code: "custom", message: grants });
        return z.NEVER;
      }
      return grants;
    }),
  /** CoreDNS image of every tenant's DNS server. */
  TENANT_DNS_IMAGE: z.string().min(1).optional(),
});
