import YAML from "yaml";
import { CliError } from "./cli-io.js";

/** The objects of a manifest stream, and one line for each document that could not be read. */
export interface Manifests {
  objects: unknown[];
  /** `<source>: document N: <what is wrong>`, one per unreadable document, in reading order. */
  problems: string[];
}

/**
 * The objects in a multi-document YAML or JSON text, in reading order. `List` kinds (and
 * typed lists such as `PodList`, whose items get the list's kind and apiVersion) and a
 * top-level JSON array contribute their items; empty documents contribute nothing. A
 * document that does not parse (a syntax error, an alias bomb) is left out and reported
 * as a problem naming `source` and its 1-based position; the others are still read.
 */
export function readManifests(text: string, source: string): Manifests {
  const objects: unknown[] = [];
  const problems: string[] = [];
  for (const document of readDocuments(text, source)) {
    if ("problem" in document) problems.push(document.problem);
    else objects.push(...flatten(document.value));
  }
  return { objects, problems };
}

/** {@link readManifests} for callers that need every document: the first problem throws a {@link CliError}. */
export function parseManifests(text: string, source: string): unknown[] {
  const { objects, problems } = readManifests(text, source);
  if (problems[0] !== undefined) throw new CliError(problems[0]);
  return objects;
}

/** One parsed YAML document and its 1-based position in the stream. */
export interface ParsedDocument {
  index: number;
  value: unknown;
}

/** The non-empty documents of a YAML stream; an unreadable one throws a {@link CliError} naming the document. */
export function parseDocuments(text: string, source: string): ParsedDocument[] {
  const documents: ParsedDocument[] = [];
  for (const document of readDocuments(text, source)) {
    if ("problem" in document) throw new CliError(document.problem);
    documents.push(document);
  }
  return documents;
}

/** Largest number of alias expansions per document; a "billion laughs" stream is refused, not expanded. */
const MAX_ALIAS_COUNT = 100;

function readDocuments(text: string, source: string): Array<ParsedDocument | { problem: string }> {
  const found: Array<ParsedDocument | { problem: string }> = [];
  let documents: ReturnType<typeof YAML.parseAllDocuments>;
  try {
    documents = YAML.parseAllDocuments(text);
  } catch (error) {
    return [{ problem: `${source}: ${firstLine(error)}` }];
  }
  documents.forEach((document, position) => {
    const index = position + 1;
    const [error] = document.errors;
    if (error !== undefined) {
      found.push({ problem: `${source}: document ${index}: ${firstLine(error).replace(/:$/, "")}` });
      return;
    }
    let value: unknown;
    try {
      value = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (cause) {
      found.push({ problem: `${source}: document ${index}: ${firstLine(cause)}` });
      return;
    }
    if (value !== null && value !== undefined) found.push({ index, value });
  });
  return found;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0] ?? message;
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
