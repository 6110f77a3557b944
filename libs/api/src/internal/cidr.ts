import { isIPv6 } from "node:net";

/** A parsed IP prefix: address bits as an integer, family width and prefix length. */
export interface Cidr {
  family: 4 | 6;
  address: bigint;
  prefixLength: number;
}

const IPV4_OCTET = /^(0|[1-9][0-9]{0,2})$/;

function parseIPv4(text: string): bigint | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!IPV4_OCTET.test(part) || Number(part) > 255) return undefined;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function parseIPv6(text: string): bigint | undefined {
  // Embedded IPv4 forms and zones are refused, as the API server's CIDR checks refuse them.
  if (text.includes(".") || text.includes("%") || !isIPv6(text)) return undefined;
  const [head = "", tail] = text.split("::");
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = tail === undefined || tail === "" ? [] : tail.split(":");
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(missing).fill("0"), ...tailGroups];
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(`0x${group}`), 0n);
}

/**
 * Parses `10.0.0.0/8` or `fd00::/8`. Returns undefined for anything else, including a prefix
 * with bits set after the mask (`10.0.0.1/8`), which NetworkPolicy would reject later anyway.
 */
export function parseCidr(text: string): Cidr | undefined {
  const match = /^([^/]+)\/(0|[1-9][0-9]{0,2})$/.exec(text);
  if (match === null) return undefined;
  const [, addressText = "", lengthText = ""] = match;
  const prefixLength = Number(lengthText);
  const v4 = parseIPv4(addressText);
  const family = v4 === undefined ? 6 : 4;
  const address = v4 ?? parseIPv6(addressText);
  const width = family === 4 ? 32 : 128;
  if (address === undefined || prefixLength > width) return undefined;
  const hostBits = BigInt(width - prefixLength);
  if (address & ((1n << hostBits) - 1n)) return undefined;
  return { family, address, prefixLength };
}

/** Whether `inner` is a strictly smaller range inside `outer` (same family, longer prefix). */
export function isStrictSubnet(outer: Cidr, inner: Cidr): boolean {
  if (outer.family !== inner.family || inner.prefixLength <= outer.prefixLength) return false;
  const shift = BigInt((outer.family === 4 ? 32 : 128) - outer.prefixLength);
  return inner.address >> shift === outer.address >> shift;
}
