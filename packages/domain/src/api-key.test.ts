import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generateApiKey, hashApiKey, parseBearerKey } from "./api-key.ts";
import { ACCESS_LEVELS } from "./scope.ts";

const KEY_FORMAT = /^platter_(ro|rw)_[0-9a-f]{64}$/;
const sha256Hex = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

const HEX = "0123456789abcdef";
const hexArb = (length: number) =>
  fc.string({ unit: fc.constantFrom(...HEX.split("")), minLength: length, maxLength: length });
const keyArb = fc.tuple(fc.constantFrom("ro", "rw"), hexArb(64)).map(([tag, hex]) => `platter_${tag}_${hex}`);

describe("generateApiKey", () => {
  it("creates read-only keys as platter_ro_ + 64 lower-case hex digits", () => {
    const { secret } = generateApiKey("read");
    expect(secret).toMatch(/^platter_ro_[0-9a-f]{64}$/);
    expect(secret).toHaveLength("platter_ro_".length + 64);
  });

  it("creates read-write keys as platter_rw_ + 64 lower-case hex digits", () => {
    const { secret } = generateApiKey("read_write");
    expect(secret).toMatch(/^platter_rw_[0-9a-f]{64}$/);
  });

  it.each(ACCESS_LEVELS)("stores the SHA-256 hex digest of the secret (%s)", (access) => {
    const key = generateApiKey(access);
    expect(key.hash).toBe(sha256Hex(key.secret));
    expect(key.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(key.hash).not.toContain(key.secret.slice(11));
  });

  it.each(ACCESS_LEVELS)("shows a short recognisable prefix, not the secret (%s)", (access) => {
    const key = generateApiKey(access);
    expect(key.secret.startsWith(key.displayPrefix)).toBe(true);
    expect(key.displayPrefix).toHaveLength(19);
    expect(key.displayPrefix).toMatch(/^platter_r[ow]_[0-9a-f]{8}$/);
  });

  it("never repeats a key (1000 generations)", () => {
    const secrets = new Set(Array.from({ length: 1000 }, (_, i) => generateApiKey(i % 2 ? "read" : "read_write").secret));
    expect(secrets.size).toBe(1000);
  });

  it("produces keys that parseBearerKey accepts", () => {
    const secrets = ACCESS_LEVELS.map((access) => generateApiKey(access).secret);
    expect(secrets.map((secret) => secret.slice(0, "platter_ro_".length)).sort()).toEqual(["platter_ro_", "platter_rw_"]);
    for (const secret of secrets) expect(parseBearerKey(`Bearer ${secret}`)).toBe(secret);
  });

  it("uses every hex digit (the secret is random, not a fixed pattern)", () => {
    const digits = new Set(
      Array.from({ length: 50 }, () => generateApiKey("read").secret.slice(11))
        .join("")
        .split(""),
    );
    expect([...digits].sort().join("")).toBe(HEX);
  });
});

describe("hashApiKey", () => {
  it("is SHA-256 hex: known vectors", () => {
    expect(hashApiKey("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(hashApiKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("equals node:crypto's SHA-256 of the UTF-8 text (property)", () => {
    fc.assert(
      fc.property(fc.oneof(keyArb, fc.string({ unit: "grapheme" })), (secret) => {
        expect(hashApiKey(secret)).toBe(sha256Hex(secret));
      }),
    );
  });
});

describe("parseBearerKey", () => {
  const key = `platter_ro_${"0123456789abcdef".repeat(4)}`;
  const rwKey = `platter_rw_${"fedcba9876543210".repeat(4)}`;

  it.each([
    ["canonical", `Bearer ${key}`, key],
    ["read-write key", `Bearer ${rwKey}`, rwKey],
    ["lower-case scheme", `bearer ${key}`, key],
    ["upper-case scheme", `BEARER ${key}`, key],
    ["mixed-case scheme", `bEaReR ${key}`, key],
    ["several spaces after the scheme", `Bearer   ${key}`, key],
    ["trailing spaces", `Bearer ${key}  `, key],
  ])("accepts %s", (_label, header, expected) => {
    expect(parseBearerKey(header)).toBe(expected);
  });

  it.each<[string, string | undefined]>([
    ["a missing header", undefined],
    ["an empty header", ""],
    ["the scheme alone", "Bearer"],
    ["the scheme and a space", "Bearer "],
    ["a bare key without scheme", key],
    ["Basic scheme", `Basic ${key}`],
    ["Token scheme", `Token ${key}`],
    ["Bearer without space", `Bearer${key}`],
    ["misspelt scheme", `Baerer ${key}`],
    ["scheme with colon", `Bearer: ${key}`],
    ["an extra token after the key", `Bearer ${key} extra`],
    ["two keys", `Bearer ${key} ${rwKey}`],
    ["an extra token before the key", `Bearer extra ${key}`],
    ["a key in quotes", `Bearer "${key}"`],
    ["a key with a trailing comma", `Bearer ${key},`],
    ["63 hex digits", `Bearer ${key.slice(0, -1)}`],
    ["65 hex digits", `Bearer ${key}0`],
    ["upper-case hex digits", `Bearer platter_ro_${"0123456789ABCDEF".repeat(4)}`],
    ["non-hex digit", `Bearer platter_ro_${"g".repeat(64)}`],
    ["unknown access tag", `Bearer platter_rx_${"0".repeat(64)}`],
    ["admin access tag", `Bearer platter_admin_${"0".repeat(64)}`],
    ["wrong product prefix", `Bearer plater_ro_${"0".repeat(64)}`],
    ["upper-case prefix", `Bearer PLATTER_RO_${"0".repeat(64)}`],
    ["missing separator", `Bearer platter_ro${"0".repeat(64)}`],
    ["a JWT", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc"],
    ["a hash instead of the key", `Bearer ${"0".repeat(64)}`],
  ])("rejects %s", (_label, header) => {
    expect(parseBearerKey(header)).toBeUndefined();
  });

  it("accepts any well-formed key with a Bearer scheme in any case (property)", () => {
    const schemeArb = fc
      .array(fc.boolean(), { minLength: 6, maxLength: 6 })
      .map((upper) => [..."bearer"].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(""));
    fc.assert(
      fc.property(schemeArb, fc.integer({ min: 1, max: 5 }), keyArb, (scheme, spaces, k) => {
        expect(parseBearerKey(`${scheme}${" ".repeat(spaces)}${k}`)).toBe(k);
      }),
    );
  });

  it("rejects a well-formed key followed by any extra token (property)", () => {
    fc.assert(
      fc.property(keyArb, fc.string({ minLength: 1 }).filter((s) => s.trim().length > 0), (k, extra) => {
        expect(parseBearerKey(`Bearer ${k} ${extra}`)).toBeUndefined();
      }),
    );
  });

  it("only ever returns a well-formed key (property)", () => {
    const outcomes = { parsed: 0, refused: 0 };
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "binary" }),
          fc.string().map((s) => `Bearer ${s}`),
          keyArb.chain((k) => fc.nat({ max: k.length - 1 }).map((i) => `Bearer ${k.slice(0, i)}${k.slice(i + 1)}`)),
          // Well-formed headers, so that keys do come back and are checked.
          fc
            .tuple(fc.constantFrom("Bearer", "bearer", "BEARER"), fc.integer({ min: 1, max: 3 }), keyArb, fc.nat({ max: 2 }))
            .map(([scheme, spaces, k, trailing]) => `${scheme}${" ".repeat(spaces)}${k}${" ".repeat(trailing)}`),
        ),
        (header) => {
          const parsed = parseBearerKey(header);
          outcomes[parsed === undefined ? "refused" : "parsed"]++;
          // Nothing (undefined), or a well-formed key that is the one in the header.
          expect(parsed === undefined || KEY_FORMAT.test(parsed)).toBe(true);
          expect(parsed === undefined || header.trimEnd().endsWith(` ${parsed}`)).toBe(true);
        },
      ),
      { numRuns: 1000 },
    );
    expect(outcomes.parsed).toBeGreaterThan(100);
    expect(outcomes.refused).toBeGreaterThan(100);
  });

  it("rejects any single-character deletion from a valid key (property)", () => {
    fc.assert(
      fc.property(keyArb.chain((k) => fc.tuple(fc.constant(k), fc.nat({ max: k.length - 1 }))), ([k, i]) => {
        expect(parseBearerKey(`Bearer ${k.slice(0, i)}${k.slice(i + 1)}`)).toBeUndefined();
      }),
    );
  });
});

describe("sandbox keys (platter_test_…)", () => {
  it.each([["read", "ro"], ["read_write", "rw"]] as const)("creates %s keys as platter_test_%s_ + 64 hex digits", (access, tag) => {
    const key = generateApiKey(access, "test");
    expect(key.secret).toMatch(new RegExp(`^platter_test_${tag}_[0-9a-f]{64}$`));
    expect(key.hash).toBe(sha256Hex(key.secret));
  });

  it.each(ACCESS_LEVELS)("shows the test prefix and 8 hex digits of the secret (%s)", (access) => {
    const key = generateApiKey(access, "test");
    expect(key.secret.startsWith(key.displayPrefix)).toBe(true);
    expect(key.displayPrefix).toMatch(/^platter_test_r[ow]_[0-9a-f]{8}$/);
    expect(key.displayPrefix).toHaveLength("platter_test_ro_".length + 8);
  });

  it("keeps live keys as they were", () => {
    expect(generateApiKey("read", "live").secret).toMatch(/^platter_ro_[0-9a-f]{64}$/);
  });

  it("reads a sandbox key from a bearer header like a live one", () => {
    const { secret } = generateApiKey("read_write", "test");
    expect(parseBearerKey(`Bearer ${secret}`)).toBe(secret);
  });

  it.each([
    ["an unknown environment", `platter_prod_ro_${"a".repeat(64)}`],
    ["test after the access tag", `platter_ro_test_${"a".repeat(64)}`],
    ["a doubled test part", `platter_test_test_ro_${"a".repeat(64)}`],
    ["a short secret", `platter_test_ro_${"a".repeat(63)}`],
  ])("refuses %s", (_what, key) => {
    expect(parseBearerKey(`Bearer ${key}`)).toBeUndefined();
  });
});
