import { MAX_LABEL_LENGTH } from "./dns-label.js";
import { HASH_HEX_LENGTH, identityHash } from "./internal/hash.js";

const LABEL_VALUE = /^([A-Za-z0-9]([-_.A-Za-z0-9]*[A-Za-z0-9])?)?$/;

/** True for a valid Kubernetes label value (≤ 63, alphanumeric at both ends, `-_.` inside). */
export function isLabelValue(value: string): boolean {
  return value.length <= MAX_LABEL_LENGTH && LABEL_VALUE.test(value);
}

/**
 * `value` itself when it is a valid label value, else a sanitised prefix plus `-` and a
 * hash of the whole value: deterministic, and always a valid label value.
 */
export function labelValue(value: string): string {
  // Valid values pass through unchanged so tenant names and namespaces read back
  // exactly; a valid value could only meet a hashed one through a 64-bit preimage.
  if (isLabelValue(value)) return value;
  const room = MAX_LABEL_LENGTH - HASH_HEX_LENGTH - 1;
  const prefix = value
    .replace(/[^-_.A-Za-z0-9]/g, "-")
    .slice(0, room)
    .replace(/^[^A-Za-z0-9]+/, "");
  return `${prefix === "" ? "tp" : prefix}-${identityHash([value])}`;
}
