import type { WebhookEvent } from "./types.ts";
import { webCrypto } from "./web-crypto.ts";

/**
 * Webhook verification. Each delivery carries `x-platter-signature`: the lowercase hex
 * HMAC-SHA256 of the raw request body, keyed with the endpoint's signing secret. Verification
 * recomputes it over the exact bytes received, so it needs the raw body, not parsed JSON.
 *
 * It uses Web Crypto (`crypto.subtle`), which is asynchronous, so `verifyWebhook` returns a promise.
 */

/** The header that carries the signature. */
export const WEBHOOK_SIGNATURE_HEADER = "x-platter-signature";

/** The delivery is not authentic: signature missing, malformed, or not matching the body and secret. Answer 400. */
export class WebhookSignatureError extends Error {
  override readonly name: string = "WebhookSignatureError";
}

const HEX_SIGNATURE = /^[0-9a-fA-F]{64}$/;
const encoder = new TextEncoder();

const bytesOfHex = (hex: string): Uint8Array => {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
};

/** Compares two byte strings in time that depends only on their length, never on where they differ. */
const constantTimeEqual = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
};

const signatureOf = (header: string | ReadonlyArray<string> | null | undefined): string => {
  const value = typeof header === "string" ? header : header?.length === 1 ? header[0] : undefined;
  if (value === undefined || value === "") throw new WebhookSignatureError(`Missing ${WEBHOOK_SIGNATURE_HEADER} header`);
  const signature = value.trim();
  if (!HEX_SIGNATURE.test(signature)) throw new WebhookSignatureError(`Malformed ${WEBHOOK_SIGNATURE_HEADER} header: expected 64 hex digits`);
  return signature;
};

/**
 * Verifies a webhook delivery and returns its envelope (`id`, `type`, `created_at`, `data`).
 *
 * - `rawBody`: the request body exactly as received, a string or bytes (a Node `Buffer` is bytes).
 *   Not a parsed object: re-serialising JSON does not give back the signed bytes.
 * - `signatureHeader`: the value of the `x-platter-signature` header (Node's `req.headers[…]` as is).
 * - `secret`: the endpoint's signing secret.
 *
 * Throws `WebhookSignatureError` when the delivery is not authentic (answer 400), and `TypeError`
 * when called with a parsed body or without a secret (a bug in the receiver, not a bad delivery).
 */
/** The raw body as bytes: a string, a Buffer/Uint8Array (or any typed-array view), or an ArrayBuffer (`await req.arrayBuffer()`). */
const bytesOfBody = (rawBody: unknown): Uint8Array | undefined => {
  if (typeof rawBody === "string") return encoder.encode(rawBody);
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  if (ArrayBuffer.isView(rawBody)) return new Uint8Array(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  return undefined;
};

export const verifyWebhook = async (
  rawBody: string | Uint8Array | ArrayBuffer,
  signatureHeader: string | ReadonlyArray<string> | null | undefined,
  secret: string,
): Promise<WebhookEvent> => {
  const body = bytesOfBody(rawBody);
  if (body === undefined) {
    throw new TypeError(
      "verifyWebhook needs the raw request body (a string, a Buffer/Uint8Array or an ArrayBuffer) exactly as received, " +
        `but got ${rawBody === null ? "null" : typeof rawBody}: the body was probably parsed as JSON before. ` +
        "Read the webhook route's body raw (e.g. express.raw({ type: \"application/json\" })) and parse it after verifying.",
    );
  }
  if (typeof secret !== "string" || secret === "") throw new TypeError("verifyWebhook needs the endpoint's signing secret");
  const received = bytesOfHex(signatureOf(signatureHeader));
  const { subtle } = await webCrypto();
  const key = await subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const expected = new Uint8Array(await subtle.sign("HMAC", key, body as Uint8Array<ArrayBuffer>));
  if (!constantTimeEqual(expected, received)) throw new WebhookSignatureError("Webhook signature does not match the body and secret");
  return JSON.parse(typeof rawBody === "string" ? rawBody : new TextDecoder().decode(body)) as WebhookEvent;
};
