import { describe, expect, it } from "vitest";
import "./reflect-metadata.js";

const reflect = Reflect as unknown as {
  defineMetadata(key: unknown, value: unknown, target: object, property?: PropertyKey): void;
  getOwnMetadata(key: unknown, target: object, property?: PropertyKey): unknown;
  getMetadata(key: unknown, target: object, property?: PropertyKey): unknown;
  metadata(key: unknown, value: unknown): (target: object, property?: PropertyKey) => void;
};

describe("Reflect metadata subset", () => {
  it("stores metadata per target and property", () => {
    class A {}
    reflect.defineMetadata("k", 1, A);
    reflect.defineMetadata("k", 2, A, "method");
    expect(reflect.getOwnMetadata("k", A)).toBe(1);
    expect(reflect.getOwnMetadata("k", A, "method")).toBe(2);
    expect(reflect.getOwnMetadata("other", A)).toBeUndefined();
  });

  it("inherits through the prototype chain for getMetadata only", () => {
    class Base {}
    class Derived extends Base {}
    reflect.metadata("design:paramtypes", [String])(Base);
    expect(reflect.getMetadata("design:paramtypes", Derived)).toEqual([String]);
    expect(reflect.getOwnMetadata("design:paramtypes", Derived)).toBeUndefined();
  });
});
