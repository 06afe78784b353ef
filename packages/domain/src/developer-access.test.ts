import { createHash } from "node:crypto";
import { Result } from "effect";
import { describe, expect, it } from "vitest";
import { generateAccessToken, hashAccessToken, isAccessToken, parseApiKeyName } from "./developer-access.ts";

describe("access tokens", () => {
  it("are 256 random bits in base64url, stored as their SHA-256", () => {
    const first = generateAccessToken();
    const second = generateAccessToken();
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.token).not.toBe(second.token);
    expect(first.hash).toBe(createHash("sha256").update(first.token).digest("hex"));
    expect(hashAccessToken(first.token)).toBe(first.hash);
    expect(isAccessToken(first.token)).toBe(true);
  });

  it.each(["", "short", "x".repeat(44), `${"x".repeat(42)}=`, `${"x".repeat(42)}/`])("refuses %j as a token", (text) => {
    expect(isAccessToken(text)).toBe(false);
  });
});

describe("parseApiKeyName", () => {
  it.each([
    ["Website booking form", "Website booking form"],
    ["  trimmed  ", "trimmed"],
    ["🍰".repeat(100), "🍰".repeat(100)],
    ["<script>alert(1)</script>", "<script>alert(1)</script>"],
  ])("accepts %j", (raw, name) => {
    expect(Result.getOrThrow(parseApiKeyName(raw))).toBe(name);
  });

  it.each([
    ["", "Give the key a name"],
    ["   ", "Give the key a name"],
    ["n".repeat(101), "A name may be at most 100 characters"],
    ["a\u0000b", "A name may not contain control characters"],
    ["new\nline", "A name may not contain control characters"],
    ["lone \ud800 surrogate", "A name must be valid Unicode text"],
  ])("refuses %j", (raw, message) => {
    const result = parseApiKeyName(raw);
    expect(Result.isFailure(result) && result.failure.message).toBe(message);
  });
});
