import { createHmac, timingSafeEqual } from "node:crypto";

/** Webhook signing: lowercase hex HMAC-SHA256 of the exact raw body bytes. */

/** Signs a raw body with an endpoint's signing secret. */
export const signPayload = (secret: string, rawBody: string | Uint8Array): string =>
  createHmac("sha256", secret).update(rawBody).digest("hex");

/** Checks a received signature in constant time; a malformed signature is simply not valid. */
export const verifySignature = (secret: string, rawBody: string | Uint8Array, signature: string): boolean => {
  const expected = Buffer.from(signPayload(secret, rawBody), "hex");
  const received = /^[0-9a-fA-F]{64}$/.test(signature) ? Buffer.from(signature, "hex") : undefined;
  return received !== undefined && timingSafeEqual(expected, received);
};
