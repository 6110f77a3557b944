import type { V1Secret } from "@kubernetes/client-node";

/** Base64-encodes each value, producing a Secret's `data` from plain strings. */
export function encodeSecretData(values: Readonly<Record<string, string>>): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) data[key] = Buffer.from(value, "utf8").toString("base64");
  return data;
}

/** Decodes a Secret's base64 `data` into UTF-8 strings; a Secret without data yields `{}`. */
export function decodeSecretData(secret: Pick<V1Secret, "data">): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries(secret.data ?? {})) {
    values[key] = Buffer.from(value, "base64").toString("utf8");
  }
  return values;
}
