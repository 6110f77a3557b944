import { describe, expect, it } from "vitest";
import { isStrictSubnet, parseCidr } from "./cidr.js";

describe("parseCidr", () => {
  it.each([
    "10.0.0.0/8",
    "0.0.0.0/0",
    "192.168.1.7/32",
    "fd00::/8",
    "::/0",
    "2001:db8::/32",
    "::1/128",
    "fe80::1:0/112",
  ])("accepts %s", (text) => expect(parseCidr(text)).toBeDefined());

  it.each([
    ["10.0.0.1/8", "host bits set"],
    ["10.0.0.0", "no prefix length"],
    ["10.0.0.0/33", "prefix too long"],
    ["10.0.0.0/08", "leading zero in prefix"],
    ["010.0.0.0/8", "leading zero in octet"],
    ["256.0.0.0/8", "octet out of range"],
    ["10.0.0/8", "three octets"],
    ["fd00::1/8", "IPv6 host bits set"],
    ["::ffff:10.0.0.0/104", "embedded IPv4"],
    ["fe80::%eth0/64", "zone"],
    ["fd00::/129", "IPv6 prefix too long"],
    ["example.com/8", "not an address"],
  ])("rejects %s (%s)", (text) => expect(parseCidr(text)).toBeUndefined());

  it("reads IPv4 and IPv6 addresses as integers", () => {
    expect(parseCidr("10.1.0.0/16")).toEqual({ family: 4, address: 0x0a010000n, prefixLength: 16 });
    expect(parseCidr("2001:db8::/32")?.address).toBe(0x20010db8n << 96n);
    expect(parseCidr("::1:0:0/96")?.address).toBe(1n << 32n);
  });
});

describe("isStrictSubnet", () => {
  const c = (text: string) => parseCidr(text)!;

  it("holds for a longer prefix inside the range", () => {
    expect(isStrictSubnet(c("10.0.0.0/8"), c("10.20.0.0/16"))).toBe(true);
    expect(isStrictSubnet(c("0.0.0.0/0"), c("169.254.169.254/32"))).toBe(true);
    expect(isStrictSubnet(c("fd00::/8"), c("fd12::/16"))).toBe(true);
  });

  it("fails for equal, outside, wider or other-family ranges", () => {
    expect(isStrictSubnet(c("10.0.0.0/8"), c("10.0.0.0/8"))).toBe(false);
    expect(isStrictSubnet(c("10.0.0.0/8"), c("11.0.0.0/16"))).toBe(false);
    expect(isStrictSubnet(c("10.0.0.0/16"), c("10.0.0.0/8"))).toBe(false);
    expect(isStrictSubnet(c("0.0.0.0/0"), c("fd00::/8"))).toBe(false);
  });
});
