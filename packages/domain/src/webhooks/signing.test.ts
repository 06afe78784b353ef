import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { signPayload, standardWebhookSignature, verifySignature } from "./signing.ts";

const hmacHex = (secret: string, body: string | Uint8Array): string =>
  createHmac("sha256", secret).update(body).digest("hex");

const secretArb = fc.string({ minLength: 1, maxLength: 64 });
const bodyArb = fc.oneof(fc.string({ unit: "grapheme" }), fc.json(), fc.uint8Array({ maxLength: 512 }));
const HEX = "0123456789abcdef";

describe("signPayload", () => {
  it("matches the RFC 4231 HMAC-SHA256 test vector", () => {
    expect(signPayload("Jefe", "what do ya want for nothing?")).toBe(
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
  });

  it("equals an independent node:crypto HMAC-SHA256 in lower-case hex (property)", () => {
    fc.assert(
      fc.property(secretArb, bodyArb, (secret, body) => {
        const signature = signPayload(secret, body);
        expect(signature).toBe(hmacHex(secret, body));
        expect(signature).toMatch(/^[0-9a-f]{64}$/);
      }),
    );
  });

  it("signs a string as its UTF-8 bytes (property)", () => {
    fc.assert(
      fc.property(secretArb, fc.string({ unit: "grapheme" }), (secret, body) => {
        expect(signPayload(secret, body)).toBe(signPayload(secret, new Uint8Array(Buffer.from(body, "utf8"))));
      }),
    );
  });

  it("depends on the secret", () => {
    expect(signPayload("secret-a", "{}")).not.toBe(signPayload("secret-b", "{}"));
  });

  it("signs the exact bytes: whitespace and key order matter", () => {
    const a = signPayload("s", '{"a":1,"b":2}');
    expect(signPayload("s", '{"b":2,"a":1}')).not.toBe(a);
    expect(signPayload("s", '{"a":1, "b":2}')).not.toBe(a);
    expect(signPayload("s", '{"a":1,"b":2}\n')).not.toBe(a);
  });
});

describe("verifySignature", () => {
  const secret = "whsec_test";
  const body = '{"id":"evt_1","type":"event.created","data":{"id":1,"name":"Gala"}}';
  const good = signPayload(secret, body);

  it("accepts the correct signature", () => {
    expect(verifySignature(secret, body, good)).toBe(true);
  });

  it("accepts the correct signature for a byte body", () => {
    const bytes = new Uint8Array(Buffer.from(body, "utf8"));
    expect(verifySignature(secret, bytes, good)).toBe(true);
  });

  it.each([
    ["empty", ""],
    ["one character short", good.slice(0, -1)],
    ["one character long", `${good}0`],
    ["half length", good.slice(0, 32)],
    ["double length", good + good],
    ["non-hex character", `${good.slice(0, -1)}g`],
    ["all non-hex", "z".repeat(64)],
    ["with 0x prefix", `0x${good.slice(2)}`],
    ["with sha256= prefix", `sha256=${good}`],
    ["with surrounding whitespace", ` ${good.slice(1)}`],
    ["trailing newline", `${good.slice(0, -1)}\n`],
    ["base64 of the digest", Buffer.from(good, "hex").toString("base64")],
    ["all zeros", "0".repeat(64)],
    ["signature of another secret", signPayload("other", body)],
    ["signature of the empty body", signPayload(secret, "")],
  ])("rejects a signature that is %s", (_label, signature) => {
    expect(verifySignature(secret, body, signature)).toBe(false);
  });

  it("rejects the right signature with the wrong secret", () => {
    expect(verifySignature("whsec_other", body, good)).toBe(false);
  });

  it("accepts any correct signature (property)", () => {
    fc.assert(
      fc.property(secretArb, bodyArb, (s, b) => {
        expect(verifySignature(s, b, hmacHex(s, b))).toBe(true);
      }),
    );
  });

  it("rejects an altered body (property)", () => {
    fc.assert(
      fc.property(secretArb, fc.string(), fc.string(), (s, original, altered) => {
        fc.pre(Buffer.from(original, "utf8").compare(Buffer.from(altered, "utf8")) !== 0);
        expect(verifySignature(s, altered, signPayload(s, original))).toBe(false);
      }),
    );
  });

  it("rejects a body with any single byte flipped (property)", () => {
    fc.assert(
      fc.property(
        secretArb,
        fc.uint8Array({ minLength: 1, maxLength: 256 }).chain((b) =>
          fc.tuple(fc.constant(b), fc.nat({ max: b.length - 1 }), fc.integer({ min: 1, max: 255 })),
        ),
        (s, [bytes, index, mask]) => {
          const signature = signPayload(s, bytes);
          const altered = Uint8Array.from(bytes);
          altered[index] = (altered[index] as number) ^ mask;
          expect(verifySignature(s, altered, signature)).toBe(false);
        },
      ),
    );
  });

  it("rejects a signature with any single hex digit changed (property)", () => {
    fc.assert(
      fc.property(
        secretArb,
        bodyArb,
        fc.nat({ max: 63 }),
        fc.constantFrom(...HEX.split("")),
        (s, b, position, digit) => {
          const signature = signPayload(s, b);
          fc.pre(signature.charAt(position) !== digit);
          const altered = signature.slice(0, position) + digit + signature.slice(position + 1);
          expect(verifySignature(s, b, altered)).toBe(false);
        },
      ),
    );
  });

  it("rejects a signature of the wrong length without throwing (property)", () => {
    fc.assert(
      fc.property(
        secretArb,
        fc.string(),
        fc.string({ unit: fc.constantFrom(...HEX.split("")), maxLength: 200 }).filter((s) => s.length !== 64),
        (s, b, signature) => {
          expect(verifySignature(s, b, signature)).toBe(false);
        },
      ),
    );
  });

  it("rejects any non-hex 64-character signature without throwing (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", minLength: 64, maxLength: 64 }).filter((s) => !/^[0-9a-fA-F]{64}$/.test(s)),
        (signature) => {
          expect(verifySignature(secret, body, signature)).toBe(false);
        },
      ),
    );
  });

  it("never throws, whatever the signature (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (signature) => {
        expect(() => verifySignature(secret, body, signature)).not.toThrow();
      }),
    );
  });
});

describe("standardWebhookSignature", () => {
  it("matches the Standard Webhooks specification's example", () => {
    expect(
      standardWebhookSignature("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}'),
    ).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("keys the HMAC with the decoded secret, over id, timestamp and the exact bytes", () => {
    const secret = `whsec_${Buffer.from("0123456789abcdef0123456789abcdef").toString("base64")}`;
    const expected = createHmac("sha256", Buffer.from("0123456789abcdef0123456789abcdef"))
      .update("evt_1.1700000000.{\"a\":1}")
      .digest("base64");
    expect(standardWebhookSignature(secret, "evt_1", 1700000000, '{"a":1}')).toBe(`v1,${expected}`);
    expect(standardWebhookSignature(secret, "evt_2", 1700000000, '{"a":1}')).not.toBe(`v1,${expected}`);
    expect(standardWebhookSignature(secret, "evt_1", 1700000001, '{"a":1}')).not.toBe(`v1,${expected}`);
  });
});
