import { PlanMemo } from "@tenantplane/sync";

type Compute = Parameters<PlanMemo["source"]>[1];
type Work = ReturnType<PlanMemo["source"]>;

/** Payloads at least this long are not kept translated: below it a copy costs less than translating again. */
export const LEAN_PAYLOAD_BYTES = 16 * 1024;

const PAYLOAD_FIELDS = ["data", "binaryData", "stringData"] as const;
/** Desired objects whose payload the memo dropped: never written as they are. */
const lean = new WeakSet<object>();

/**
 * The planner's memo, without the payload of large ConfigMap and Secret translations: the
 * memo keeps each cached tenant object's translation for as long as the object is cached, so
 * a 1 MiB ConfigMap would be held twice (tenant cache and translation). What a plan compares
 * (the content hash, in the metadata) is kept. The plan that translates an object gets the
 * translation whole (only the memo's copy goes without the payload): a change planned and
 * written at once (a watch event) translates its object once. A Create or Update planned later
 * from the lean entry is planned again without the memo (see {@link needsFullTranslation}),
 * which costs one translation per such write and none per pass.
 */
export class LeanPlanMemo extends PlanMemo {
  override source(value: object, compute: Compute): Work {
    let whole: Work | undefined;
    const kept = super.source(value, () => withoutLargePayload((whole = compute())));
    return whole ?? kept;
  }
}

function withoutLargePayload(work: Work): Work {
  if (work.type !== "translated") return work;
  const object = work.translation.object as unknown as Record<string, unknown>;
  if (object["kind"] !== "ConfigMap" && object["kind"] !== "Secret") return work;
  if (payloadLength(object) < LEAN_PAYLOAD_BYTES) return work;
  const kept: Record<string, unknown> = { ...object };
  for (const f of PAYLOAD_FIELDS) delete kept[f];
  lean.add(kept);
  return { ...work, translation: { ...work.translation, object: kept as unknown as typeof work.translation.object } };
}

/** True when `object` (a planned desired object) lost its payload in the memo and must be translated again. */
export function needsFullTranslation(object: unknown): boolean {
  return typeof object === "object" && object !== null && lean.has(object);
}

function payloadLength(object: Record<string, unknown>): number {
  let n = 0;
  for (const f of PAYLOAD_FIELDS) {
    const payload = object[f];
    if (typeof payload !== "object" || payload === null) continue;
    for (const [k, v] of Object.entries(payload)) n += k.length + (typeof v === "string" ? v.length : 0);
  }
  return n;
}
