/**
 * The type and object metadata of one watch event line, read from its bytes without decoding or
 * parsing the rest: what a large event (a megabyte ConfigMap) is, before deciding whether its
 * body is worth a megabyte of decoding and parsing. The API server writes `{"type":…,"object":
 * {"kind":…,"apiVersion":…,"metadata":{…},…}}`, its fields in that order; a line that does not
 * start so (metadata after the payload, another shape) gives undefined, and the caller parses
 * it whole.
 */
export interface EventMetadata {
  type: string;
  object: { kind?: string; apiVersion?: string; metadata: Record<string, unknown> & { name: string } };
  /** Bytes of the object's JSON in the line (all of it, payload included). */
  objectBytes: number;
  /** Bytes of its metadata's JSON, from the line. */
  metadataBytes: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

export function eventMetadata(line: Buffer): EventMetadata | undefined {
  const r = new Reader(line);
  if (!r.take(OPEN_BRACE) || r.key() !== "type") return undefined;
  const type = r.string();
  if (type === undefined || !r.take(COMMA) || r.key() !== "object") return undefined;
  const objectStart = r.at;
  if (!r.take(OPEN_BRACE)) return undefined;
  const object: Partial<EventMetadata["object"]> = {};
  for (;;) {
    const key = r.key();
    if (key === "kind" || key === "apiVersion") {
      const value = r.string();
      if (value === undefined) return undefined;
      object[key] = value;
    } else if (key === "metadata") {
      const from = r.at;
      const to = r.skipValue();
      if (to === undefined) return undefined;
      let metadata: unknown;
      try {
        metadata = JSON.parse(line.toString("utf8", from, to));
      } catch {
        return undefined;
      }
      if (
        typeof metadata !== "object" ||
        metadata === null ||
        typeof (metadata as { name?: unknown }).name !== "string"
      )
        return undefined;
      // The object runs to the line's last closing brace (its own, then the event's).
      let end = line.length;
      while (end > 0 && line[end - 1] !== CLOSE_BRACE) end--;
      return {
        type,
        object: { ...object, metadata: metadata as EventMetadata["object"]["metadata"] },
        objectBytes: Math.max(0, end - 1 - objectStart),
        metadataBytes: to - from,
      };
    } else {
      // Anything else before the metadata (the payload first): not the shape read here.
      return undefined;
    }
    if (!r.take(COMMA)) return undefined;
  }
}

/** A cursor over JSON bytes that reads keys and short strings and skips whole values. */
class Reader {
  at = 0;

  constructor(private readonly bytes: Buffer) {}

  /** Consumes `byte` (after whitespace) if it is next. */
  take(byte: number): boolean {
    this.space();
    if (this.bytes[this.at] !== byte) return false;
    this.at++;
    return true;
  }

  /** A key and its colon. */
  key(): string | undefined {
    const key = this.string();
    return key !== undefined && this.take(COLON) ? key : undefined;
  }

  /** A JSON string value, decoded. */
  string(): string | undefined {
    this.space();
    const from = this.at;
    if (this.bytes[from] !== QUOTE) return undefined;
    const to = this.stringEnd(from);
    if (to === undefined) return undefined;
    this.at = to;
    try {
      return JSON.parse(this.bytes.toString("utf8", from, to)) as string;
    } catch {
      return undefined;
    }
  }

  /** Skips one object or array (strings inside it included); returns where it ends. */
  skipValue(): number | undefined {
    this.space();
    const first = this.bytes[this.at];
    if (first !== OPEN_BRACE && first !== OPEN_BRACKET) return undefined;
    let depth = 0;
    for (let i = this.at; i < this.bytes.length; i++) {
      const b = this.bytes[i];
      if (b === QUOTE) {
        const end = this.stringEnd(i);
        if (end === undefined) return undefined;
        i = end - 1;
      } else if (b === OPEN_BRACE || b === OPEN_BRACKET) depth++;
      else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) {
          this.at = i + 1;
          return this.at;
        }
      }
    }
    return undefined;
  }

  /** Where the string starting at `from` (its opening quote) ends, past its closing quote. */
  private stringEnd(from: number): number | undefined {
    for (let i = from + 1; i < this.bytes.length; i++) {
      const b = this.bytes[i];
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) return i + 1;
    }
    return undefined;
  }

  private space(): void {
    for (let b = this.bytes[this.at]; b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09; b = this.bytes[++this.at]);
  }
}
