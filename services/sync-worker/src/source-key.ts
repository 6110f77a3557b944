/** A tenant object's identity: what the sync worker queues and plans one at a time. */
export interface SourceKey {
  kind: string;
  namespace: string;
  name: string;
}

/**
 * `<kind>/<namespace>/<name>`: kinds and namespaces never contain a slash and names of
 * the synced kinds cannot either, so the encoding is unambiguous.
 */
export function encodeKey(key: SourceKey): string {
  return `${key.kind}/${key.namespace}/${key.name}`;
}

/** The inverse of {@link encodeKey}. */
export function decodeKey(text: string): SourceKey {
  const first = text.indexOf("/");
  const second = text.indexOf("/", first + 1);
  return { kind: text.slice(0, first), namespace: text.slice(first + 1, second), name: text.slice(second + 1) };
}
