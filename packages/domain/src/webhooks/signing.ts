import { createHmac, createSecretKey, type KeyObject, randomBytes, timingSafeEqual } from "node:crypto";

/** Webhook signing: the spec's lowercase hex HMAC-SHA256 of the exact raw body bytes, and Standard Webhooks' signature. */

/**
 * A new signing secret: `whsec_` and 32 random bytes in base64, the form Standard Webhooks libraries
 * read (their HMAC key is the decoded bytes); the spec's `x-platter-signature` keys with the whole
 * string. Secrets made before were base64url, which Node decodes alike; rotating gives a base64 one.
 */
export const generateSigningSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`;

/** Secrets' HMAC keys kept at most (well above the endpoints one dispatcher sends to at once); the oldest leaves first. */
const KEYS_KEPT = 10_000;

/**
 * An HMAC key made once per secret and kept (`KEYS_KEPT`): a KeyObject costs about 1 µs per HMAC
 * where a string or Buffer key is imported anew each time, and decoding a Standard Webhooks secret's
 * base64 again per attempt cost as much as the HMAC.
 */
const keptKey = (keys: Map<string, KeyObject>, secret: string, make: (secret: string) => KeyObject): KeyObject => {
  let key = keys.get(secret);
  if (key === undefined) {
    if (keys.size >= KEYS_KEPT) keys.delete(keys.keys().next().value!);
    key = make(secret);
    keys.set(secret, key);
  }
  return key;
};
const platterKeys = new Map<string, KeyObject>();
const standardKeys = new Map<string, KeyObject>();

/** Signs a raw body with an endpoint's signing secret. */
export const signPayload = (secret: string, rawBody: string | Uint8Array): string =>
  createHmac("sha256", keptKey(platterKeys, secret, (s) => createSecretKey(Buffer.from(s, "utf8")))).update(rawBody).digest("hex");

/** Checks a received signature in constant time; a malformed signature is simply not valid. */
export const verifySignature = (secret: string, rawBody: string | Uint8Array, signature: string): boolean => {
  const expected = Buffer.from(signPayload(secret, rawBody), "hex");
  const received = /^[0-9a-fA-F]{64}$/.test(signature) ? Buffer.from(signature, "hex") : undefined;
  return received !== undefined && timingSafeEqual(expected, received);
};

/**
 * Standard Webhooks (standardwebhooks.com, what Svix and its libraries verify): `webhook-signature`
 * is `v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the
 * bytes the secret's base64 part (after `whsec_`) encodes. Beside the spec's `x-platter-signature`,
 * which keys the HMAC with the whole secret string.
 */
export const standardWebhookSignature = (secret: string, id: string, timestampSeconds: number, rawBody: string | Uint8Array): string => {
  const key = keptKey(standardKeys, secret, (s) => createSecretKey(Buffer.from(s.startsWith("whsec_") ? s.slice("whsec_".length) : s, "base64")));
  return `v1,${createHmac("sha256", key).update(`${id}.${timestampSeconds}.`).update(rawBody).digest("base64")}`;
};
