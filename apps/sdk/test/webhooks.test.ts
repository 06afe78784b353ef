import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { envelopeBody, signPayload, standardWebhookSignature } from "@platter/domain";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { verifyWebhook, WEBHOOK_SIGNATURE_HEADER, WebhookSignatureError } from "../src/index.ts";

/**
 * Webhook verification against bodies and signatures made by the server's own code: the
 * dispatcher's `envelopeBody` (the exact bytes) and `signPayload` (the signature).
 */

const SECRET = "whsec_0123456789abcdef0123456789abcdef";
const ANNA = {
  id: 42, name: "Anna Müller 🍰", email: "anna@example.com", phone: null, company: null, created_at: "2027-04-17T09:30:00.000Z",
};
const body = envelopeBody({
  envelopeId: "evt_0f3c2a1b",
  type: "client.created",
  createdAt: "2027-04-17T09:30:00.125Z",
  payload: { version: 1, data: ANNA },
})!;
const signature = signPayload(SECRET, body);

describe("verifyWebhook", () => {
  it("returns the envelope of a delivery with a valid signature (string body)", async () => {
    expect(await verifyWebhook(body, signature, SECRET)).toEqual({
      id: "evt_0f3c2a1b",
      type: "client.created",
      created_at: "2027-04-17T09:30:00.125Z",
      data: ANNA,
    });
  });

  it("accepts the body as a Buffer and as a Uint8Array, including a view into a larger buffer", async () => {
    const bytes = Buffer.from(body, "utf8");
    expect(await verifyWebhook(bytes, signature, SECRET)).toEqual(JSON.parse(body));
    expect(await verifyWebhook(new Uint8Array(bytes), signature, SECRET)).toEqual(JSON.parse(body));
    const padded = Buffer.concat([Buffer.from("xxxx"), bytes, Buffer.from("yyyy")]);
    expect(await verifyWebhook(padded.subarray(4, 4 + bytes.length), signature, SECRET)).toEqual(JSON.parse(body));
  });

  it("accepts the body as an ArrayBuffer, as `await request.arrayBuffer()` gives it in fetch-style runtimes", async () => {
    const request = new Request("http://receiver.test/hooks", { method: "POST", body });
    expect(await verifyWebhook(await request.arrayBuffer(), signature, SECRET)).toEqual(JSON.parse(body));
    const tampered = new TextEncoder().encode(body.replace("Anna", "Hans")).buffer;
    await expect(verifyWebhook(tampered, signature, SECRET)).rejects.toBeInstanceOf(WebhookSignatureError);
  });

  it("accepts Node's header value as given: a one-element array, surrounding spaces, upper-case hex", async () => {
    await expect(verifyWebhook(body, [signature], SECRET)).resolves.toMatchObject({ id: "evt_0f3c2a1b" });
    await expect(verifyWebhook(body, ` ${signature} `, SECRET)).resolves.toMatchObject({ id: "evt_0f3c2a1b" });
    await expect(verifyWebhook(body, signature.toUpperCase(), SECRET)).resolves.toMatchObject({ id: "evt_0f3c2a1b" });
  });

  it("names the header the dispatcher signs with by default", () => {
    expect(WEBHOOK_SIGNATURE_HEADER).toBe("x-platter-signature");
  });

  it.each<[string, string | Buffer]>([
    ["a changed character", body.replace("Anna", "Anne")],
    ["an added space", body.replace(`"id":42`, `"id": 42`)],
    ["a trailing newline", `${body}\n`],
    ["re-serialised JSON", JSON.stringify(JSON.parse(body), null, 1)],
    ["the body in another encoding", Buffer.from(body, "latin1")],
    ["an empty body", ""],
  ])("refuses a tampered body: %s", async (_label, tampered) => {
    await expect(verifyWebhook(tampered, signature, SECRET)).rejects.toThrow(
      new WebhookSignatureError("Webhook signature does not match the body and secret"),
    );
  });

  it.each([
    ["another secret", "whsec_another"],
    ["the secret with a trailing space", `${SECRET} `],
  ])("refuses a signature made with %s", async (_label, secret) => {
    await expect(verifyWebhook(body, signature, secret)).rejects.toBeInstanceOf(WebhookSignatureError);
  });

  it.each<[string, string | string[] | undefined | null, RegExp]>([
    ["missing", undefined, /^Missing x-platter-signature header$/],
    ["null", null, /^Missing/],
    ["empty", "", /^Missing/],
    ["two values", [signature, signature], /^Missing/],
    ["too short", signature.slice(0, 63), /^Malformed x-platter-signature header/],
    ["too long", `${signature}0`, /^Malformed/],
    ["not hex", signature.replace(/^../, "zz"), /^Malformed/],
    ["prefixed", `sha256=${signature}`, /^Malformed/],
    ["base64", Buffer.from(signature, "hex").toString("base64"), /^Malformed/],
  ])("refuses a %s signature header", async (_label, header, message) => {
    const failure = verifyWebhook(body, header, SECRET);
    await expect(failure).rejects.toBeInstanceOf(WebhookSignatureError);
    await expect(failure).rejects.toThrow(message);
  });

  it("refuses a signature of the right shape that is wrong in its last digit", async () => {
    const wrong = signature.slice(0, 63) + (signature.endsWith("0") ? "1" : "0");
    await expect(verifyWebhook(body, wrong, SECRET)).rejects.toBeInstanceOf(WebhookSignatureError);
  });

  it.each<[string, unknown]>([
    ["a parsed object", JSON.parse(body)],
    ["an array", [1, 2]],
    ["null", null],
    ["a number", 42],
  ])("refuses %s with a TypeError that says to pass the raw body", async (_label, parsed) => {
    const failure = verifyWebhook(parsed as string, signature, SECRET);
    await expect(failure).rejects.toBeInstanceOf(TypeError);
    await expect(failure).rejects.toThrow(/needs the raw request body .* parsed as JSON before/);
  });

  it("refuses a missing secret with a TypeError", async () => {
    await expect(verifyWebhook(body, signature, "")).rejects.toThrow(new TypeError("verifyWebhook needs the endpoint's signing secret"));
  });
});

describe("on a runtime without a global crypto (Node 18)", () => {
  it("falls back to node:crypto's Web Crypto for verification and idempotency keys", async () => {
    const script = `
      delete globalThis.crypto;
      if (globalThis.crypto !== undefined) throw new Error("global crypto still present");
      const { verifyWebhook } = await import(${JSON.stringify(fileURLToPath(new URL("../src/index.ts", import.meta.url)))});
      const envelope = await verifyWebhook(process.env.BODY, process.env.SIGNATURE, process.env.SECRET);
      const { randomUuid } = await import(${JSON.stringify(fileURLToPath(new URL("../src/web-crypto.ts", import.meta.url)))});
      console.log(JSON.stringify({ id: envelope.id, uuid: await randomUuid() }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "--eval", script], {
      env: { ...process.env, BODY: body, SIGNATURE: signature, SECRET },
    });
    const result = JSON.parse(stdout);
    expect(result.id).toBe("evt_0f3c2a1b");
    expect(result.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe("verifyWebhook with Standard Webhooks headers", () => {
  /** A base64 secret, as Platter makes them now. */
  const STANDARD_SECRET = `whsec_${Buffer.from("a 32-byte signing key, for tests").toString("base64")}`;
  const ID = "evt_0f3c2a1b";
  const NOW_S = 1_800_000_000;
  const now = () => NOW_S * 1000;
  /** Headers signed by the standardwebhooks library itself, an implementation independent of ours. */
  const signedBy = (secret: string, timestampS = NOW_S, id = ID) => ({
    "webhook-id": id,
    "webhook-timestamp": String(timestampS),
    "webhook-signature": new StandardWebhook(secret).sign(id, new Date(timestampS * 1000), body),
  });

  it("accepts a delivery signed by the standardwebhooks library, given Node's req.headers", async () => {
    expect(await verifyWebhook(body, signedBy(STANDARD_SECRET), STANDARD_SECRET, { now })).toEqual(JSON.parse(body));
  });

  it("accepts a fetch Headers object, and the server's own signature", async () => {
    const headers = new Headers({
      "webhook-id": ID,
      "webhook-timestamp": String(NOW_S),
      "webhook-signature": standardWebhookSignature(STANDARD_SECRET, ID, NOW_S, body),
    });
    expect(await verifyWebhook(body, headers, STANDARD_SECRET, { now })).toEqual(JSON.parse(body));
  });

  it("accepts when one of several signatures matches (a secret rotation) and refuses when none does", async () => {
    const other = `whsec_${Buffer.from("another 32-byte key for the test").toString("base64")}`;
    const headers = signedBy(STANDARD_SECRET);
    const both = { ...headers, "webhook-signature": `${signedBy(other)["webhook-signature"]} ${headers["webhook-signature"]}` };
    expect(await verifyWebhook(body, both, STANDARD_SECRET, { now })).toEqual(JSON.parse(body));
    await expect(verifyWebhook(body, signedBy(other), STANDARD_SECRET, { now })).rejects.toBeInstanceOf(WebhookSignatureError);
  });

  it.each([
    ["six minutes old", NOW_S - 360],
    ["six minutes ahead", NOW_S + 360],
  ])("refuses a delivery whose timestamp is %s (a replay), even with a valid signature", async (_, timestampS) => {
    await expect(verifyWebhook(body, signedBy(STANDARD_SECRET, timestampS), STANDARD_SECRET, { now })).rejects.toThrow(
      /timestamp is not within 300 s/,
    );
  });

  it("takes its tolerance from the options", async () => {
    const old = signedBy(STANDARD_SECRET, NOW_S - 3600);
    expect(await verifyWebhook(body, old, STANDARD_SECRET, { now, toleranceSeconds: 7200 })).toEqual(JSON.parse(body));
    await expect(verifyWebhook(body, signedBy(STANDARD_SECRET, NOW_S - 61), STANDARD_SECRET, { now, toleranceSeconds: 60 })).rejects.toBeInstanceOf(
      WebhookSignatureError,
    );
  });

  it.each([
    ["a tampered body", { ...signedBy(STANDARD_SECRET) }, body.replace("Anna", "Anne")],
    ["another id", { ...signedBy(STANDARD_SECRET), "webhook-id": "evt_other" }, body],
    ["no webhook-id", { "webhook-timestamp": String(NOW_S), "webhook-signature": signedBy(STANDARD_SECRET)["webhook-signature"] }, body],
    ["a timestamp that is not a number", { ...signedBy(STANDARD_SECRET), "webhook-timestamp": "soon" }, body],
  ])("refuses %s", async (_, headers, received) => {
    await expect(verifyWebhook(received, headers, STANDARD_SECRET, { now })).rejects.toBeInstanceOf(WebhookSignatureError);
  });

  it("refuses a captured delivery replayed with its webhook-* headers deleted, even though its x-platter-signature is valid", async () => {
    const captured = { ...signedBy(SECRET), [WEBHOOK_SIGNATURE_HEADER]: signature };
    expect(await verifyWebhook(body, captured, SECRET, { now })).toEqual(JSON.parse(body));
    const stripped = { [WEBHOOK_SIGNATURE_HEADER]: signature };
    const failure = verifyWebhook(body, stripped, SECRET, { now });
    await expect(failure).rejects.toBeInstanceOf(WebhookSignatureError);
    await expect(failure).rejects.toThrow(/^Missing webhook-id, webhook-timestamp or webhook-signature header .*allowSignatureWithoutTimestamp/);
    await expect(verifyWebhook(body, new Headers(stripped), SECRET, { now })).rejects.toBeInstanceOf(WebhookSignatureError);
  });

  it.each([
    ["no webhook-timestamp", "webhook-timestamp"],
    ["no webhook-signature", "webhook-signature"],
  ])("refuses a delivery with %s, whatever its x-platter-signature", async (_, dropped) => {
    const headers: Record<string, string> = { ...signedBy(SECRET), [WEBHOOK_SIGNATURE_HEADER]: signature };
    delete headers[dropped];
    await expect(verifyWebhook(body, headers, SECRET, { now })).rejects.toBeInstanceOf(WebhookSignatureError);
  });

  it("checks x-platter-signature alone only when the caller opts in with allowSignatureWithoutTimestamp", async () => {
    const opted = { now, allowSignatureWithoutTimestamp: true };
    expect(await verifyWebhook(body, { [WEBHOOK_SIGNATURE_HEADER]: signature }, SECRET, opted)).toEqual(JSON.parse(body));
    await expect(verifyWebhook(body, { [WEBHOOK_SIGNATURE_HEADER]: signPayload("whsec_wrong", body) }, SECRET, opted)).rejects.toBeInstanceOf(
      WebhookSignatureError,
    );
  });

  it("still checks the Standard Webhooks signature and timestamp when they are sent, with the option set", async () => {
    const opted = { now, allowSignatureWithoutTimestamp: true };
    const stale = { ...signedBy(SECRET, NOW_S - 3600), [WEBHOOK_SIGNATURE_HEADER]: signature };
    await expect(verifyWebhook(body, stale, SECRET, opted)).rejects.toThrow(/timestamp is not within 300 s/);
  });

  it("reads a secret made before secrets were standard base64 (base64url), as the server signs with it", async () => {
    const legacy = `whsec_${Buffer.from("legacy key bytes ~~~~ ???? >>>>!").toString("base64url")}`;
    expect(legacy).toMatch(/[-_]/);
    const headers = { "webhook-id": ID, "webhook-timestamp": String(NOW_S), "webhook-signature": standardWebhookSignature(legacy, ID, NOW_S, body) };
    expect(await verifyWebhook(body, headers, legacy, { now })).toEqual(JSON.parse(body));
  });
});
