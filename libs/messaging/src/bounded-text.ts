/** What ends a text that was cut, so a reader knows there was more. */
export const TRUNCATED = "…(truncated)";

/**
 * Most bytes (UTF-8) of a Decision's free text: its `reason`, `error.reason` and
 * `error.message`. Tenant text (names, annotation values, the host API's echo of tenant fields)
 * only ever reaches a Decision through these fields, so this is also the most tenant text one
 * carries per field; a tenant cannot make a Decision, its stream message or its Event as large
 * as its own object.
 */
export const MAX_DECISION_TEXT = 1024;

const MARK_BYTES = Buffer.byteLength(TRUNCATED);

/**
 * `text` when it has at most `maxBytes` bytes of UTF-8; otherwise its longest prefix that fits
 * with {@link TRUNCATED} appended, cut between code points. The result never exceeds `maxBytes`,
 * so bounding twice changes nothing, and the cut depends only on the prefix: a bounded text
 * quoted after the same words bounds to what the unbounded one would.
 */
export function boundedText(text: string, maxBytes = MAX_DECISION_TEXT): string {
  if (maxBytes < MARK_BYTES) throw new RangeError(`a bound of ${maxBytes} bytes leaves no room for the mark`);
  if (text.length <= maxBytes / 3 || Buffer.byteLength(text) <= maxBytes) return text;
  const budget = maxBytes - MARK_BYTES;
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const size = utf8Size(ch.codePointAt(0) ?? 0);
    if (bytes + size > budget) break;
    bytes += size;
    end += ch.length;
  }
  return `${text.slice(0, end)}${TRUNCATED}`;
}

// A lone surrogate is encoded as U+FFFD (3 bytes), as Buffer.byteLength counts it.
function utf8Size(codePoint: number): number {
  if (codePoint < 0x80) return 1;
  if (codePoint < 0x800) return 2;
  if (codePoint < 0x10000) return 3;
  return 4;
}
