import YAML from "yaml";
import { CliError } from "./cli-io.js";

/**
 * The objects in a multi-document YAML or JSON text, in reading order. `List` kinds (and
 * typed lists such as `PodList`, whose items get the list's kind and apiVersion) and a
 * top-level JSON array contribute their items; empty documents contribute nothing.
 * Throws a {@link CliError} naming `source` and the 1-based document of a syntax error.
 */
export function parseManifests(text: string, source: string): unknown[] {
  return parseDocuments(text, source).flatMap(({ value }) => flatten(value));
}

/** One parsed YAML document and its 1-based position in the stream. */
export interface ParsedDocument {
  index: number;
  value: unknown;
}

/** The non-empty documents of a YAML stream; a syntax error throws a {@link CliError} naming the document. */
export function parseDocuments(text: string, source: string): ParsedDocument[] {
  const documents: ParsedDocument[] = [];
  YAML.parseAllDocuments(text).forEach((document, position) => {
    const [error] = document.errors;
    if (error !== undefined) {
      const firstLine = (error.message.split("\n")[0] ?? error.message).replace(/:$/, "");
      throw new CliError(`${source}: document ${position + 1}: ${firstLine}`);
    }
    const value: unknown = document.toJS();
    if (value !== null && value !== undefined) documents.push({ index: position + 1, value });
  });
  return documents;
}

function flatten(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (!isObject(value) || !Array.isArray(value["items"])) return [value];
  const kind = value["kind"];
  if (typeof kind !== "string" || !kind.endsWith("List")) return [value];
  const itemKind = kind === "List" ? undefined : kind.slice(0, -"List".length);
  return value["items"].map((item: unknown) =>
    itemKind !== undefined && isObject(item) && item["kind"] === undefined
      ? { apiVersion: value["apiVersion"], kind: itemKind, ...item }
      : item,
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
