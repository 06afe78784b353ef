import { createHash, randomBytes } from "node:crypto";
import type { Access } from "./scope.ts";

/**
 * API keys: `platter_<ro|rw>_<64 hex digits>`, and a sandbox organization's
 * `platter_test_<ro|rw>_<64 hex digits>`. The prefix makes a leaked key recognisable (secret
 * scanners, logs) and a sandbox's key unmistakable; only its SHA-256 is stored. A random 256-bit
 * secret needs no slow password hash: nothing can be guessed from its digest.
 */

const KEY_PATTERN = /^platter_(test_)?(ro|rw)_[0-9a-f]{64}$/;

/** Which kind of organization a key is for: a live one, or a sandbox (`platter_test_…`). */
export type KeyEnvironment = "live" | "test";

/** Hex digits of the secret a key's display prefix shows after its `platter_…_` part. */
const PREFIX_HEX_DIGITS = 8;
const BEARER_PATTERN = /^Bearer +(\S+) *$/i;

/** A freshly generated key: the secret is shown once, the hash is stored. */
export interface GeneratedApiKey {
  readonly secret: string;
  readonly hash: string;
  readonly displayPrefix: string;
}

const accessTag = (access: Access): string => (access === "read" ? "ro" : "rw");

/** Creates a new random key for the given access level, of a live organization or (`test`) a sandbox. */
export const generateApiKey = (access: Access, environment: KeyEnvironment = "live"): GeneratedApiKey => {
  const tag = `platter_${environment === "test" ? "test_" : ""}${accessTag(access)}_`;
  const secret = `${tag}${randomBytes(32).toString("hex")}`;
  return { secret, hash: hashApiKey(secret), displayPrefix: secret.slice(0, tag.length + PREFIX_HEX_DIGITS) };
};

/** The stored form of a key. */
export const hashApiKey = (secret: string): string => createHash("sha256").update(secret).digest("hex");

/**
 * Extracts a well-formed key from an `Authorization` header value, or `undefined` when the
 * header is missing, uses another scheme or carries something that is not one of our keys.
 */
export const parseBearerKey = (header: string | undefined): string | undefined => {
  const key = header === undefined ? undefined : BEARER_PATTERN.exec(header)?.[1];
  return key !== undefined && KEY_PATTERN.test(key) ? key : undefined;
};
