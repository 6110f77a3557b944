/** Subject and stream names: the only place they are spelled out. */
export const subjects = {
  tenantsStream: "TENANTS",
  decisionsStream: "DECISIONS",
  tenantsAll: "tenantplane.tenants.>",
  decisionsAll: "tenantplane.decisions.>",
  /** `tenantplane.tenants.<tenant>.changed` */
  tenantChanged: (tenant: string): string => `tenantplane.tenants.${token(tenant)}.changed`,
  /** `tenantplane.decisions.<tenant>.<kind>.<action>` */
  decision: (tenant: string, kind: string, action: string): string =>
    `tenantplane.decisions.${token(tenant)}.${token(kind)}.${token(action)}`,
} as const;

// Tenant names are DNS labels and kinds are identifiers, so this only guards
// against a programming error that would silently widen a subscription.
function token(value: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(value)) {
    throw new Error(`invalid NATS subject token ${JSON.stringify(value)}`);
  }
  return value;
}
