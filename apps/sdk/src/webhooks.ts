import type { WebhookEvent } from "./types.ts";
import { webCrypto } from "./web-crypto.ts";

/**
 * Webhook verification. Each delivery carries two signatures over the raw request body:
 * - `x-platter-signature`: the lowercase hex HMAC-SHA256 of the body, keyed with the endpoint's
 *   signing secret (the whole `whsec_…` string);
 * - Standard Webhooks' `webhook-signature`: `v1,` and the base64 HMAC-SHA256 of
 *   `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the secret's decoded bytes. Its timestamp
 *   lets a receiver refuse replays of old deliveries.
 * Verification recomputes them over the exact bytes received, so it needs the raw body, not
 * parsed JSON. It uses Web Crypto (`crypto.subtle`), which is asynchronous, so `verifyWebhook`
 * returns a promise.
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

/** Request headers as Node (`req.headers`) or fetch (`request.headers`) give them. */
export type WebhookHeaders =
  | { readonly get: (name: string) => string | null }
  | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>;

/** How old (or how far ahead) a delivery's `webhook-timestamp` may be, by default: five minutes, as Standard Webhooks advise. */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

/** Options of `verifyWebhook`. */
export interface VerifyWebhookOptions {
  /** Refuse a delivery whose `webhook-timestamp` is further than this from now (replay protection). */
  readonly toleranceSeconds?: number;
  /** The current time in milliseconds, for tests. */
  readonly now?: () => number;
  /**
   * Accept a delivery whose headers carry only `x-platter-signature` (no `webhook-*` headers): the
   * spec's signature of the body alone, with no timestamp, so a captured delivery can be replayed
   * forever. Off by default: without the Standard Webhooks headers a delivery is refused. When the
   * Standard Webhooks headers are there they are always what is checked.
   */
  readonly allowSignatureWithoutTimestamp?: boolean;
}

const headerOf = (headers: WebhookHeaders, name: string): string | undefined => {
  if (typeof (headers as { get?: unknown }).get === "function") return (headers as { get: (name: string) => string | null }).get(name) ?? undefined;
  const value = (headers as Readonly<Record<string, string | ReadonlyArray<string> | undefined>>)[name];
  return typeof value === "string" ? value : value?.length === 1 ? value[0] : undefined;
};

/** The key bytes of a `whsec_…` secret: its base64 (or base64url) part, decoded. */
const standardKeyOf = (secret: string): Uint8Array => {
  const encoded = (secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret).replaceAll("-", "+").replaceAll("_", "/");
  const binary = atob(encoded.padEnd(Math.ceil(encoded.length / 4) * 4, "="));
  return Uint8Array.from(binary, (character) => character.charCodeAt(0));
};

const base64Of = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));

const hmac = async (key: Uint8Array, data: Uint8Array): Promise<Uint8Array> => {
  const { subtle } = await webCrypto();
  const imported = await subtle.importKey("raw", key as Uint8Array<ArrayBuffer>, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await subtle.sign("HMAC", imported, data as Uint8Array<ArrayBuffer>));
};

/** Standard Webhooks: a fresh timestamp and one `v1,` signature (of possibly several, space-separated) that matches. */
const verifyStandard = async (body: Uint8Array, headers: WebhookHeaders, secret: string, options: VerifyWebhookOptions) => {
  const id = headerOf(headers, "webhook-id");
  const timestamp = headerOf(headers, "webhook-timestamp");
  const signatures = headerOf(headers, "webhook-signature");
  if (id === undefined || timestamp === undefined || signatures === undefined) {
    throw new WebhookSignatureError(
      "Missing webhook-id, webhook-timestamp or webhook-signature header (x-platter-signature alone is accepted only with " +
        "{ allowSignatureWithoutTimestamp: true }, which gives up replay protection)",
    );
  }
  const seconds = /^\d{1,12}$/.test(timestamp.trim()) ? Number(timestamp.trim()) : Number.NaN;
  const tolerance = options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  if (!Number.isFinite(seconds) || Math.abs((options.now ?? Date.now)() / 1000 - seconds) > tolerance) {
    throw new WebhookSignatureError(`Webhook timestamp is not within ${tolerance} s of now (a replayed or delayed delivery)`);
  }
  const signed = new Uint8Array([...encoder.encode(`${id}.${timestamp.trim()}.`), ...body]);
  const expected = encoder.encode(base64Of(await hmac(standardKeyOf(secret), signed)));
  const matches = signatures
    .split(" ")
    .filter((entry) => entry.startsWith("v1,"))
    .some((entry) => constantTimeEqual(encoder.encode(entry.slice(3)), expected));
  if (!matches) throw new WebhookSignatureError("Webhook signature does not match the body and secret");
};

const signatureOf = (header: string | ReadonlyArray<string> | null | undefined): string => {
  const value = typeof header === "string" ? header : header?.length === 1 ? header[0] : undefined;
  if (value === undefined || value === "") throw new WebhookSignatureError(`Missing ${WEBHOOK_SIGNATURE_HEADER} header`);
  const signature = value.trim();
  if (!HEX_SIGNATURE.test(signature)) throw new WebhookSignatureError(`Malformed ${WEBHOOK_SIGNATURE_HEADER} header: expected 64 hex digits`);
  return signature;
};

/** The raw body as bytes: a string, a Buffer/Uint8Array (or any typed-array view), or an ArrayBuffer (`await req.arrayBuffer()`). */
const bytesOfBody = (rawBody: unknown): Uint8Array | undefined => {
  if (typeof rawBody === "string") return encoder.encode(rawBody);
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  if (ArrayBuffer.isView(rawBody)) return new Uint8Array(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  return undefined;
};

const isHeaders = (value: unknown): value is WebhookHeaders =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Verifies a webhook delivery and returns its envelope (`id`, `type`, `created_at`, `data`).
 *
 * - `rawBody`: the request body exactly as received, a string or bytes (a Node `Buffer` is bytes).
 *   Not a parsed object: re-serialising JSON does not give back the signed bytes.
 * - `headers`: the request's headers (Node's `req.headers`, or a fetch `Headers`). The Standard
 *   Webhooks headers are required: the signature is checked, and its timestamp must be within
 *   `toleranceSeconds` (five minutes by default) of now, so a replayed delivery is refused. A
 *   delivery without them is refused, unless `allowSignatureWithoutTimestamp` is set: then
 *   `x-platter-signature` is checked instead, without replay protection. Passing the value of
 *   `x-platter-signature` alone (the SDK's first form) is that explicit choice too.
 * - `secret`: the endpoint's signing secret.
 *
 * Throws `WebhookSignatureError` when the delivery is not authentic (answer 400), and `TypeError`
 * when called with a parsed body or without a secret (a bug in the receiver, not a bad delivery).
 */
export const verifyWebhook = async (
  rawBody: string | Uint8Array | ArrayBuffer,
  headers: WebhookHeaders | string | ReadonlyArray<string> | null | undefined,
  secret: string,
  options: VerifyWebhookOptions = {},
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
  const standardSent = isHeaders(headers) && headerOf(headers, "webhook-signature") !== undefined;
  if (isHeaders(headers) && (standardSent || options.allowSignatureWithoutTimestamp !== true)) {
    // Deleting the webhook-* headers must not turn a replay-proof check into one without a timestamp.
    await verifyStandard(body, headers, secret, options);
  } else {
    const received = bytesOfHex(signatureOf(isHeaders(headers) ? headerOf(headers, WEBHOOK_SIGNATURE_HEADER) : headers));
    const expected = await hmac(encoder.encode(secret), body);
    if (!constantTimeEqual(expected, received)) throw new WebhookSignatureError("Webhook signature does not match the body and secret");
  }
  return JSON.parse(typeof rawBody === "string" ? rawBody : new TextDecoder().decode(body)) as WebhookEvent;
};
