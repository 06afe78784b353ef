import { Result } from "effect";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor } from "../cursor.ts";
import { decodeInput } from "../input.ts";
import { type Client, ClientCreate, clientListing } from "./client.ts";

const errorOf = (body: unknown): string | undefined => {
  const result = decodeInput(ClientCreate, body);
  return Result.isFailure(result) ? result.failure.message : undefined;
};

const decoded = (body: unknown): ClientCreate => Result.getOrThrow(decodeInput(ClientCreate, body));

const PHONE_MESSAGE = "phone must be a phone number (digits, spaces, + ( ) . -)";

describe("ClientCreate via decodeInput: name", () => {
  it.each<[string, unknown, string]>([
    ["missing", {}, "name is required"],
    ["missing with other valid fields", { email: "a@b.co" }, "name is required"],
    ["empty", { name: "" }, "name must not be empty"],
    ["blank", { name: "  " }, "name must not be empty"],
    ["number", { name: 1 }, "name must be a string"],
    ["null", { name: null }, "name must be a string"],
    ["too long", { name: "x".repeat(201) }, "name must be at most 200 characters"],
    ["NUL", { name: "Ann\u0000a" }, "name must not contain NUL characters"],
  ])("%s -> %j", (_label, body, message) => {
    expect(errorOf(body)).toBe(message);
  });

  it("accepts a 200-character name", () => {
    expect(errorOf({ name: "x".repeat(200) })).toBeUndefined();
  });
});

describe("ClientCreate via decodeInput: email", () => {
  it.each([
    "anna@example.com",
    "a@b.co",
    "first.last+tag@sub.example.org",
    "ANNA@EXAMPLE.COM",
    "müller@beispiel.de",
    "o'brien@example.ie",
  ])("accepts %s", (email) => {
    expect(decoded({ name: "Anna", email })).toEqual({ name: "Anna", email });
  });

  it.each([
    ["no at sign", "anna.example.com"],
    ["no domain dot", "anna@example"],
    ["nothing before the at", "@example.com"],
    ["nothing after the at", "anna@"],
    ["two at signs", "anna@@example.com"],
    ["two addresses", "anna@example.com@other.com"],
    ["a space inside", "anna smith@example.com"],
    ["a leading space", " anna@example.com"],
    ["a trailing space", "anna@example.com "],
    ["a newline", "anna@example.com\nbcc@evil.com"],
    ["a display name", "Anna <anna@example.com>"],
    ["empty", ""],
    ["trailing dot only", "anna@example."],
  ])("rejects an email with %s", (_label, email) => {
    expect(errorOf({ name: "Anna", email })).toBe("email must be an email address");
  });

  it("accepts an email of exactly 254 characters and rejects 255", () => {
    const at254 = `${"a".repeat(254 - "@example.com".length)}@example.com`;
    expect(at254).toHaveLength(254);
    expect(errorOf({ name: "Anna", email: at254 })).toBeUndefined();
    expect(errorOf({ name: "Anna", email: `a${at254}` })).toBe("email must be at most 254 characters");
  });

  it.each([5, true, ["a@b.co"], { address: "a@b.co" }])("rejects a non-string email %j", (email) => {
    expect(errorOf({ name: "Anna", email })).toBe("email must be a string");
  });

  it("accepts null", () => {
    expect(decoded({ name: "Anna", email: null })).toEqual({ name: "Anna", email: null });
  });

  it("accepts simple local@domain.tld addresses (property)", () => {
    const part = fc.stringMatching(/^[a-z0-9][a-z0-9._+-]{0,20}$/);
    fc.assert(
      fc.property(part, fc.stringMatching(/^[a-z0-9-]{1,20}$/), fc.stringMatching(/^[a-z]{2,6}$/), (local, domain, tld) => {
        expect(errorOf({ name: "Anna", email: `${local}@${domain}.${tld}` })).toBeUndefined();
      }),
    );
  });

  it("rejects any text without an at sign (property)", () => {
    fc.assert(
      fc.property(fc.string().filter((s) => !s.includes("@")), (email) => {
        expect(errorOf({ name: "Anna", email })).toBeDefined();
      }),
    );
  });
});

describe("ClientCreate via decodeInput: phone", () => {
  it.each(["+44 (20) 7946-0958", "030 1234567", "555.123.4567", "123", "+1-202-555-0143", "1".repeat(40), "+" + "1".repeat(40)])(
    "accepts %j",
    (phone) => {
      expect(decoded({ name: "Anna", phone })).toEqual({ name: "Anna", phone });
    },
  );

  it.each([
    ["too short", "12"],
    ["empty", ""],
    ["too long", "1".repeat(41)],
    ["letters", "abc123"],
    ["vanity letters", "1-800-FLOWERS"],
    ["extension word", "555 1234 ext 5"],
    ["two plus signs", "++44 20 7946 0958"],
    ["plus in the middle", "44+20 7946 0958"],
    ["slash", "030/1234567"],
    ["hash", "#123456"],
    ["newline", "030 1234\n567"],
    ["NUL", "030\u00001234567"],
    ["full-width digits", "０３０１２３４"],
  ])("rejects a phone that is %s", (_label, phone) => {
    expect(errorOf({ name: "Anna", phone })).toBe(PHONE_MESSAGE);
  });

  it.each([491701234567, true, ["123"]])("rejects a non-string phone %j", (phone) => {
    expect(errorOf({ name: "Anna", phone })).toBe("phone must be a string");
  });

  it("accepts null", () => {
    expect(decoded({ name: "Anna", phone: null })).toEqual({ name: "Anna", phone: null });
  });

  it("accepts any 3 to 40 phone characters with an optional leading plus (property)", () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.string({ unit: fc.constantFrom(..."0123456789 ().-".split("")), minLength: 3, maxLength: 40 }),
        (plus, rest) => {
          expect(errorOf({ name: "Anna", phone: (plus ? "+" : "") + rest })).toBeUndefined();
        },
      ),
    );
  });
});

describe("ClientCreate via decodeInput: company", () => {
  it("accepts 200 characters and rejects 201", () => {
    expect(errorOf({ name: "Anna", company: "c".repeat(200) })).toBeUndefined();
    expect(errorOf({ name: "Anna", company: "c".repeat(201) })).toBe("company must be at most 200 characters");
  });

  it.each<[string, unknown, string]>([
    ["a number", 3, "company must be a string"],
    ["a boolean", true, "company must be a string"],
    ["NUL", "ACME\u0000", "company must not contain NUL characters"],
  ])("rejects a company that is %s", (_label, company, message) => {
    expect(errorOf({ name: "Anna", company })).toBe(message);
  });

  it.each(["", "  ", "ACME GmbH & Co. KG", "株式会社"])("accepts %j (company may be blank)", (company) => {
    expect(decoded({ name: "Anna", company })).toEqual({ name: "Anna", company });
  });
});

describe("ClientCreate via decodeInput: body shape", () => {
  it.each<[string, unknown]>([
    ["an array", []],
    ["null", null],
    ["a string", "x"],
    ["a number", 5],
  ])("rejects %s with 'request body must be a JSON object'", (_label, body) => {
    expect(errorOf(body)).toBe("request body must be a JSON object");
  });

  it.each(["fax", "colour", "id", "created_at", "Email"])("rejects unknown field %s", (field) => {
    expect(errorOf({ name: "Anna", [field]: "x" })).toBe(`unknown field: ${field}`);
  });

  it("accepts null for every optional field", () => {
    const body = { name: "Anna", email: null, phone: null, company: null };
    expect(decoded(body)).toEqual(body);
  });

  it("accepts a full body", () => {
    const body = { name: "Anna Müller", email: "anna@example.com", phone: "+49 30 1234567", company: "Müller AG" };
    expect(decoded(body)).toEqual(body);
  });

  it("decodes every valid body to itself (property)", () => {
    const bodyArb = fc.record(
      {
        name: fc.string({ minLength: 1, maxLength: 200 }).filter((s) => s.trim().length > 0 && !s.includes("\u0000")),
        email: fc.option(fc.constantFrom("a@b.co", "anna@example.com", "x.y+z@mail.example.org"), { nil: null }),
        phone: fc.option(fc.stringMatching(/^\+?[0-9]{3,15}$/), { nil: null }),
        company: fc.option(fc.string({ maxLength: 200 }).filter((s) => !s.includes("\u0000")), { nil: null }),
      },
      { requiredKeys: ["name"] },
    );
    fc.assert(
      fc.property(bodyArb, (body) => {
        expect(decoded(body)).toEqual(body);
      }),
      { numRuns: 500 },
    );
  });
});

describe("clientListing", () => {
  const client: Client = {
    id: 3,
    name: "Anna",
    email: null,
    phone: null,
    company: null,
    created_at: "2026-01-01T00:00:00.000Z",
  };

  it("is the clients endpoint, by name ascending then id", () => {
    expect(clientListing.endpoint).toBe("clients");
    expect(clientListing.direction).toBe("asc");
    expect(clientListing.keyOf(client)).toEqual(["Anna", 3]);
  });

  it("round-trips its key through a cursor", () => {
    const cursor = encodeCursor(clientListing.endpoint, clientListing.keyOf(client));
    expect(Result.getOrThrow(decodeCursor("clients", cursor, clientListing.cursorKey))).toEqual(["Anna", 3]);
  });
});
