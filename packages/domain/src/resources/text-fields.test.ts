import { Result } from "effect";
import { describe, expect, it } from "vitest";
import { decodeInput } from "../input.ts";
import { ClientCreate } from "./client.ts";
import { EventCreate, MAX_PRICE_PER_HEAD } from "./event.ts";

/** Text is counted and checked as Unicode, and amounts have an upper bound with its own message. */

const failure = (schema: typeof EventCreate | typeof ClientCreate, body: unknown) => {
  const result = decodeInput(schema as never, body);
  return Result.isFailure(result) ? result.failure.message : undefined;
};

describe("text fields", () => {
  it("count characters as code points: 200 emoji are a valid name, 201 are not", () => {
    expect(failure(EventCreate, { name: "🎉".repeat(200) })).toBeUndefined();
    expect(failure(EventCreate, { name: "🎉".repeat(201) })).toBe("name must be at most 200 characters");
    expect(failure(ClientCreate, { name: "x", company: "🍰".repeat(200) })).toBeUndefined();
  });

  it.each([
    ["a lone high surrogate", "\ud800"],
    ["a lone low surrogate", "ok\udfff"],
  ])("refuse %s rather than store a replacement character", (_, name) => {
    expect(failure(EventCreate, { name })).toBe("name must be valid Unicode text");
    expect(failure(ClientCreate, { name: "x", company: name })).toBe("company must be valid Unicode text");
  });
});

describe("price_per_head", () => {
  it("has an upper bound with a message of its own", () => {
    expect(failure(EventCreate, { name: "x", price_per_head: MAX_PRICE_PER_HEAD })).toBeUndefined();
    expect(failure(EventCreate, { name: "x", price_per_head: 1e20 })).toBe(`price_per_head must be at most ${MAX_PRICE_PER_HEAD}`);
  });
});
