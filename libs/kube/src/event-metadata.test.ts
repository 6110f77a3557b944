import { describe, expect, it } from "vitest";
import { eventMetadata } from "./event-metadata.js";

const line = (event: unknown) => Buffer.from(JSON.stringify(event), "utf8");

describe("eventMetadata", () => {
  it("reads the type, kind, apiVersion and metadata of an event as the API server writes it, and its sizes", () => {
    const metadata = {
      name: "big-1",
      namespace: "bench",
      resourceVersion: "42",
      // Values that look like structure: braces, brackets, quotes and escapes inside strings.
      annotations: { "a/b": '{"x":[1,2]} \\" } ] \u0001 é€😀' },
      managedFields: [{ manager: "kubectl", fieldsV1: { "f:data": { "f:payload": {} } } }],
    };
    const object = { kind: "ConfigMap", apiVersion: "v1", metadata, data: { payload: "x".repeat(200_000) } };
    const read = eventMetadata(line({ type: "MODIFIED", object }));
    expect(read).toEqual({
      type: "MODIFIED",
      object: { kind: "ConfigMap", apiVersion: "v1", metadata },
      objectBytes: Buffer.byteLength(JSON.stringify(object)),
      metadataBytes: Buffer.byteLength(JSON.stringify(metadata)),
    });
  });

  it("allows whitespace between tokens and a line ending", () => {
    const text =
      '{ "type" : "ADDED" , "object" : { "kind":"Secret" , "metadata" : {"name":"s"} , "data":{"k":"dg=="} } }\r';
    expect(eventMetadata(Buffer.from(text))).toMatchObject({
      type: "ADDED",
      object: { kind: "Secret", metadata: { name: "s" } },
    });
  });

  it("gives undefined, so the event is parsed whole, for any other shape", () => {
    const metadata = { name: "c" };
    for (const event of [
      // The payload before the metadata: reading on would mean reading the payload.
      { type: "ADDED", object: { kind: "ConfigMap", data: { p: "x" }, metadata } },
      // The object before the type.
      { object: { metadata }, type: "ADDED" },
      // No name.
      { type: "ADDED", object: { metadata: { namespace: "n" } } },
      { type: "ADDED", object: { metadata: "not an object" } },
      { type: 1, object: { metadata } },
      [1, 2],
    ]) {
      expect(eventMetadata(line(event)), JSON.stringify(event)).toBeUndefined();
    }
    const whole = line({ type: "ADDED", object: { metadata: { name: "c", labels: { a: "b" } } } });
    for (let cut = 1; cut < whole.length - 20; cut++) {
      // Cut inside the metadata or before it: never a wrong answer, never a throw.
      const read = eventMetadata(whole.subarray(0, cut));
      if (read !== undefined) expect(read.object.metadata).toEqual({ name: "c", labels: { a: "b" } });
    }
  });
});
