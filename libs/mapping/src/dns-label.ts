/** Longest DNS-1123 label, and longest label value. */
export const MAX_LABEL_LENGTH = 63;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** True for a DNS-1123 label: lowercase alphanumerics and '-', alphanumeric at both ends, ≤ 63. */
export function isDnsLabel(value: string): boolean {
  return value.length <= MAX_LABEL_LENGTH && DNS_LABEL.test(value);
}
