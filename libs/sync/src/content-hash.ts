import { createHash, createHmac, type Hash, type Hmac } from "node:crypto";
import { canonicalJson } from "@tenantplane/api";

/** Hex digits kept from the sha256 of the canonical object: 64 bits, so a missed update is out of reach. */
export const CONTENT_HASH_LENGTH = 16;

/**
 * Canonical JSON hashed between two steps of {@link contentHashSteps}, in UTF-16 code units: a
 * megabyte ConfigMap is hashed in about 16 steps of well under a millisecond each.
 */
export const HASH_SLICE_CHARS = 64 * 1024;

/**
 * Stable hash of `value`'s canonical JSON (`canonicalJson` of `@tenantplane/api`): HMAC-SHA256
 * under `key` when given, so a hash of a Secret cannot be checked against guessed values by
 * anyone without the key; plain SHA-256 otherwise. The text is fed to the digest in pieces,
 * never written whole: a megabyte value costs no megabyte string.
 */
export function contentHash(value: unknown, key?: string): string {
  return runSteps(contentHashSteps(value, key));
}

/**
 * {@link contentHash} as steps: the generator pauses (yields) after each
 * {@link HASH_SLICE_CHARS} or so of canonical JSON hashed and returns the hash, so a caller can
 * serve its event loop between slices of a large value. `value` must not change meanwhile.
 */
export function* contentHashSteps(value: unknown, key?: string): Generator<void, string, void> {
  const digest = key === undefined ? createHash("sha256") : createHmac("sha256", key);
  // Most objects are far smaller than a slice: printed whole and natively, which is quicker.
  if (!textExceeds(value, HASH_SLICE_CHARS)) {
    return digest.update(canonicalJson(value)).digest("hex").slice(0, CONTENT_HASH_LENGTH);
  }
  for (const piece of canonicalPieces(value)) {
    if (typeof piece === "string") digest.update(piece);
    else yield* hashLongString(digest, piece.text);
    yield;
  }
  return digest.digest("hex").slice(0, CONTENT_HASH_LENGTH);
}

/** Runs steps (such as {@link contentHashSteps}) to the end at once and gives their result. */
export function runSteps<T>(steps: Generator<void, T, void>): T {
  for (;;) {
    const next = steps.next();
    if (next.done === true) return next.value;
  }
}

/**
 * Whether the strings and keys in `value` add up to more than `limit` code units (a bound on its
 * JSON's length from below, within a few characters per value). Stops counting once beyond.
 */
function textExceeds(value: unknown, limit: number): boolean {
  let left = limit;
  const count = (v: unknown): boolean => {
    if (typeof v === "string") return (left -= v.length + 2) < 0;
    if (typeof v !== "object" || v === null) return (left -= 8) < 0;
    if (Array.isArray(v)) return v.some(count);
    // A toJSON value may print anything: counted as long, so it goes through canonicalPieces.
    if (typeof (v as { toJSON?: unknown }).toJSON === "function") return true;
    const keys = Object.keys(v);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      if ((left -= k.length + 4) < 0 || count((v as Record<string, unknown>)[k])) return true;
    }
    return false;
  };
  return count(value);
}

/** A string longer than one slice, hashed apart from the text around it. */
interface LongString {
  text: string;
}

/**
 * The canonical JSON of `value` as pieces in order: runs of text of about one slice, and each
 * string value longer than a slice on its own (neither copied nor escaped here).
 */
function canonicalPieces(value: unknown): (string | LongString)[] {
  const pieces: (string | LongString)[] = [];
  let text = "";
  const add = (s: string) => {
    text += s;
    if (text.length >= HASH_SLICE_CHARS) {
      pieces.push(text);
      text = "";
    }
  };
  // Mirrors canonicalJson: JSON.stringify over a copy whose objects were rebuilt with sorted keys.
  const write = (v: unknown, inArray: boolean): void => {
    if (typeof v === "string" && v.length > HASH_SLICE_CHARS) {
      if (text !== "") pieces.push(text);
      text = "";
      pieces.push({ text: v });
      return;
    }
    if (typeof v !== "object" || v === null) {
      // undefined, functions and symbols print nothing (left out of objects, null in arrays).
      const printed = JSON.stringify(v) as string | undefined;
      add(printed ?? (inArray ? "null" : ""));
      return;
    }
    if (Array.isArray(v)) {
      add("[");
      for (let i = 0; i < v.length; i++) {
        if (i > 0) add(",");
        write(resolved(v[i], String(i)), true);
      }
      add("]");
      return;
    }
    add("{");
    let first = true;
    for (const k of canonicalKeys(v)) {
      const member = resolved((v as Record<string, unknown>)[k], k);
      if (member === undefined || typeof member === "function" || typeof member === "symbol") continue;
      add(first ? `${JSON.stringify(k)}:` : `,${JSON.stringify(k)}:`);
      first = false;
      write(member, false);
    }
    add("}");
  };
  write(resolved(value, ""), false);
  if (text !== "") pieces.push(text);
  return pieces;
}

/** `v` with toJSON applied (as canonicalJson does: again while the result has one). */
function resolved(v: unknown, key: string): unknown {
  while (typeof v === "object" && v !== null && typeof (v as { toJSON?: unknown }).toJSON === "function") {
    v = (v as { toJSON: (key: string) => unknown }).toJSON(key);
  }
  return v;
}

/**
 * Own enumerable keys in the order a sorted copy prints them: array-index keys ("0", "12")
 * first in numeric order, as every JavaScript object orders them, then the others by UTF-16
 * code units.
 */
function canonicalKeys(v: object): string[] {
  const keys = Object.keys(v).sort();
  const indices = keys.filter(isArrayIndex);
  if (indices.length === 0) return keys;
  indices.sort((a, b) => Number(a) - Number(b));
  return [...indices, ...keys.filter((k) => !isArrayIndex(k))];
}

function isArrayIndex(k: string): boolean {
  return /^(?:0|[1-9]\d*)$/.test(k) && Number(k) < 2 ** 32 - 1;
}

/** Text JSON.stringify writes as it is: no quote, backslash, control character or surrogate half. */
const PLAIN = /^[\u0020\u0021\u0023-\u005b\u005d-\ud7ff\ue000-\uffff]*$/;

/** A long string value, quoted and escaped exactly as JSON.stringify writes it, hashed one slice per step. */
function* hashLongString(digest: Hash | Hmac, s: string): Generator<void, void, void> {
  const plain = PLAIN.test(s);
  digest.update('"');
  for (let start = 0; start < s.length; ) {
    let end = Math.min(start + HASH_SLICE_CHARS, s.length);
    // A surrogate pair cut in two would print as two escaped halves.
    if (end < s.length && isHighSurrogate(s.charCodeAt(end - 1)) && isLowSurrogate(s.charCodeAt(end))) end++;
    const slice = s.slice(start, end);
    digest.update(plain ? slice : JSON.stringify(slice).slice(1, -1));
    start = end;
    if (start < s.length) yield;
  }
  digest.update('"');
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
