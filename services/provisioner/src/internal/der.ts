// The few DER (ASN.1 Distinguished Encoding Rules) shapes an X.509 certificate of tenantplane's
// PKI is made of, written by hand: a certificate is a handful of nested TLVs, and building it
// this way (with node:crypto for keys and signatures) costs a fraction of a millisecond, against
// tens of milliseconds through a general ASN.1 library.

/** One encoded TLV, or the bytes of one. */
export type Der = Buffer;

export function tlv(tag: number, ...content: readonly Der[]): Der {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), lengthOf(body.length), body]);
}

function lengthOf(n: number): Der {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export const sequence = (...items: readonly Der[]): Der => tlv(0x30, ...items);
export const set = (...items: readonly Der[]): Der => tlv(0x31, ...items);
export const boolean = (value: boolean): Der => tlv(0x01, Buffer.from([value ? 0xff : 0x00]));
export const octetString = (bytes: Der): Der => tlv(0x04, bytes);
export const utf8String = (text: string): Der => tlv(0x0c, Buffer.from(text, "utf8"));
/** Context-specific constructed tag [n] (EXPLICIT wrapping). */
export const explicit = (n: number, ...items: readonly Der[]): Der => tlv(0xa0 | n, ...items);
/** Context-specific primitive tag [n] (IMPLICIT, e.g. a key identifier). */
export const implicit = (n: number, bytes: Der): Der => tlv(0x80 | n, bytes);

/** A non-negative INTEGER from big-endian magnitude bytes, in its minimal form. */
export function unsignedInteger(magnitude: Der): Der {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const bytes = magnitude.subarray(start);
  return tlv(0x02, bytes[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

/** BIT STRING of whole bytes (keys, signatures). */
export const bitString = (bytes: Der): Der => tlv(0x03, Buffer.from([0]), bytes);

/**
 * BIT STRING of named bits (KeyUsage): bit 0 is the first, most significant one. Trailing zero
 * bits are dropped, as DER requires.
 */
export function namedBits(bits: readonly number[]): Der {
  const last = Math.max(...bits);
  const bytes = Buffer.alloc(Math.floor(last / 8) + 1);
  for (const bit of bits) bytes[Math.floor(bit / 8)]! |= 0x80 >> bit % 8;
  return tlv(0x03, Buffer.from([7 - (last % 8)]), bytes);
}

export function objectIdentifier(dotted: string): Der {
  const arcs = dotted.split(".").map(Number);
  if (arcs.length < 2 || arcs.some((a) => !Number.isSafeInteger(a) || a < 0)) throw new Error(`bad OID ${dotted}`);
  const out: number[] = [];
  for (const arc of [arcs[0]! * 40 + arcs[1]!, ...arcs.slice(2)]) {
    const groups = [arc & 0x7f];
    for (let rest = Math.floor(arc / 128); rest > 0; rest = Math.floor(rest / 128))
      groups.unshift(0x80 | (rest & 0x7f));
    out.push(...groups);
  }
  return tlv(0x06, Buffer.from(out));
}

/** RFC 5280 time: UTCTime through 2049, GeneralizedTime from 2050; whole seconds, UTC. */
export function time(at: Date): Der {
  const iso = at.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  const year = at.getUTCFullYear();
  if (year < 1950 || year > 9999) throw new Error(`time ${iso} cannot be encoded in a certificate`);
  return year < 2050 ? tlv(0x17, Buffer.from(digits.slice(2), "ascii")) : tlv(0x18, Buffer.from(digits, "ascii"));
}

/** One TLV read back: its tag, its whole encoding and its content. */
export interface DerElement {
  tag: number;
  whole: Der;
  content: Der;
}

/** The elements directly inside `content` (a SEQUENCE's or SET's content), in order. */
export function children(content: Der): DerElement[] {
  const out: DerElement[] = [];
  for (let at = 0; at < content.length; ) {
    const tag = content[at]!;
    let length = content[at + 1];
    let header = 2;
    if (length === undefined) throw new Error("truncated DER");
    if (length & 0x80) {
      const count = length & 0x7f;
      if (count === 0 || count > 4) throw new Error("unsupported DER length");
      length = 0;
      for (let i = 0; i < count; i++) length = length * 256 + content[at + 2 + i]!;
      header += count;
    }
    const end = at + header + length;
    if (end > content.length) throw new Error("truncated DER");
    out.push({ tag, whole: content.subarray(at, end), content: content.subarray(at + header, end) });
    at = end;
  }
  return out;
}
