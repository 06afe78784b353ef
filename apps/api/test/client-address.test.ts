import { describe, expect, it } from "vitest";
import { addressGroup } from "@platter/ops";

/** The key a client address is counted under: IPv4 as it is, IPv6 by its /64, and garbage bounded. */

describe("addressGroup", () => {
  it.each([
    ["203.0.113.9", "203.0.113.9"],
    ["::ffff:203.0.113.9", "203.0.113.9"],
    ["::FFFF:127.0.0.1", "127.0.0.1"],
    ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"],
    ["2001:db8:1:2::9", "2001:db8:1:2::/64"],
    ["2001:0db8:0001:0002:ffff::1", "2001:db8:1:2::/64"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    ["64:ff9b::203.0.113.9", "64:ff9b:0:0::/64"],
    ["not an address", "not an address"],
    ["1::2::3", "1::2::3"],
    ["x".repeat(100), "x".repeat(64)],
  ])("counts %s as %s", (address, group) => {
    expect(addressGroup(address)).toBe(group);
  });
});
