import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * Signing secrets (endpoints' current and previous ones, listeners') and Developer-area sessions'
 * form secrets are stored sealed: AES-256-GCM under a key the operator provides
 * (`SECRET_ENCRYPTION_KEYS`), never in clear. A stored value describes itself,
 * `v1:<key id>:<iv>:<ciphertext and tag>` (base64url), and is bound to the row it belongs to (its
 * organization and identity as additional authenticated data), so a ciphertext copied onto another
 * endpoint or organization does not open. Several keys may be given: the first seals, every one
 * opens, so a key is rotated by putting a new one first, re-sealing (`platter secrets reencrypt`),
 * then dropping the old one.
 */

/** One key of the keyring: a short id (written into every value it seals) and 32 bytes. */
export interface SecretKey {
  readonly id: string;
  readonly key: Uint8Array;
}

/** A stored secret could not be opened: unknown key, wrong key or row (the GCM tag), or not sealed at all. */
export class SecretUnreadable extends Error {
  override readonly name = "SecretUnreadable";
}

/** The keyring's cipher: seals with the first key, opens with any. */
export interface SecretCipher {
  /** The id of the key that seals. */
  readonly currentKeyId: string;
  /** Every key id it can open. */
  readonly keyIds: ReadonlyArray<string>;
  /** `plain` sealed for the row `context` names (see `endpointSecretContext`, `sessionSecretContext`). */
  readonly seal: (plain: string, context: string) => string;
  /** `plain` sealed with the key `keyId` (one of `keyIds`) rather than the current one: a key's check value (`keyCheckValue`). */
  readonly sealWith: (keyId: string, plain: string, context: string) => string;
  /** The secret a stored value holds, if sealed for `context` with one of the keys; throws `SecretUnreadable` otherwise. */
  readonly open: (stored: string, context: string) => string;
}

/** What every sealed value starts with (the format's version). */
export const SEALED_PREFIX = "v1:";

/** A key id: short, and free of the format's separator. */
export const SECRET_KEY_ID = /^[A-Za-z0-9_-]{1,16}$/;

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The id of the key a stored value was sealed with; undefined when it is not a sealed value (plaintext). */
export const sealedKeyId = (stored: string): string | undefined => {
  if (!stored.startsWith(SEALED_PREFIX)) return undefined;
  const parts = stored.split(":");
  return parts.length === 4 ? parts[1] : undefined;
};

/** The row identity an endpoint's (or listener's) secrets are sealed for. */
export const endpointSecretContext = (organizationId: number | string, endpointId: number | string): string =>
  `webhook_endpoints:${organizationId}:${endpointId}`;

/** The row identity a Developer-area session's form secret is sealed for (its token's hash is its identity when it is written). */
export const sessionSecretContext = (organizationId: number | string, tokenHash: string): string =>
  `developer_sessions:${organizationId}:${tokenHash}`;

/** The cipher of `keys` (at least one, 32 bytes each, distinct ids). */
export const makeSecretCipher = (keys: ReadonlyArray<SecretKey>): SecretCipher => {
  if (keys.length === 0) throw new Error("a secret cipher needs at least one key");
  const byId = new Map<string, Buffer>();
  for (const { id, key } of keys) {
    if (!SECRET_KEY_ID.test(id)) throw new Error(`secret key id "${id}" must be 1 to 16 letters, digits, - or _`);
    if (key.length !== 32) throw new Error(`secret key "${id}" must be 32 bytes`);
    if (byId.has(id)) throw new Error(`secret key id "${id}" is given twice`);
    byId.set(id, Buffer.from(key));
  }
  const current = keys[0]!;
  const sealWith = (keyId: string, plain: string, context: string) => {
    const key = byId.get(keyId);
    if (key === undefined) throw new Error(`secret key "${keyId}" is not in this keyring`);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, "utf8"));
    const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `${SEALED_PREFIX}${keyId}:${iv.toString("base64url")}:${sealed.toString("base64url")}`;
  };
  return {
    currentKeyId: current.id,
    keyIds: [...byId.keys()],
    seal: (plain, context) => sealWith(current.id, plain, context),
    sealWith,
    open: (stored, context) => {
      const parts = stored.split(":");
      if (parts.length !== 4 || `${parts[0]}:` !== SEALED_PREFIX) throw new SecretUnreadable("a stored secret is not sealed (plaintext or damaged)");
      const key = byId.get(parts[1]!);
      if (key === undefined) {
        throw new SecretUnreadable(`a stored secret is sealed with key "${parts[1]}", which SECRET_ENCRYPTION_KEYS does not hold (it holds ${[...byId.keys()].join(", ")})`);
      }
      const iv = Buffer.from(parts[2]!, "base64url");
      const sealed = Buffer.from(parts[3]!, "base64url");
      if (iv.length !== IV_BYTES || sealed.length < TAG_BYTES) throw new SecretUnreadable("a stored secret is damaged");
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
        decipher.setAAD(Buffer.from(context, "utf8"));
        decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
        return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString("utf8");
      } catch {
        throw new SecretUnreadable(`a stored secret does not open with key "${parts[1]}": a different key under that id, or a value moved from another row`);
      }
    },
  };
};

/** What every key's check value seals: a known text, so a different key under a known id shows at start (`secret_key_checks`). */
export const KEY_CHECK_TEXT = "platter secret key check";

/** The context a key's check value is sealed for: its own id, so a check value moved under another id does not open. */
export const keyCheckContext = (keyId: string): string => `secret_key_checks:${keyId}`;

/** Key `keyId`'s check value: the known text sealed with that key of `cipher`, stored once per key id. */
export const keyCheckValue = (cipher: SecretCipher, keyId: string): string => cipher.sealWith(keyId, KEY_CHECK_TEXT, keyCheckContext(keyId));

/** Whether `stored`, key `keyId`'s check value, opens to the known text with `cipher`'s key of that id: false for a different key under that id. */
export const keyCheckHolds = (cipher: SecretCipher, keyId: string, stored: string): boolean => {
  if (sealedKeyId(stored) !== keyId) return false;
  try {
    return cipher.open(stored, keyCheckContext(keyId)) === KEY_CHECK_TEXT;
  } catch (error) {
    if (error instanceof SecretUnreadable) return false;
    throw error;
  }
};

/** A new random key of `id`, and its text as `SECRET_ENCRYPTION_KEYS` takes it (`<id>:<base64 of 32 bytes>`). */
export const generateSecretKey = (id: string): { readonly key: SecretKey; readonly text: string } => {
  const key = randomBytes(32);
  return { key: { id, key }, text: `${id}:${key.toString("base64")}` };
};

/**
 * Parses a keyring as `SECRET_ENCRYPTION_KEYS` (and the embedded database's key file) write it:
 * comma-separated `<id>:<base64 of 32 bytes>`, the first sealing. A message naming what is wrong otherwise.
 */
export const parseSecretKeys = (text: string): ReadonlyArray<SecretKey> | string => {
  const entries = text.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "");
  if (entries.length === 0) return "must hold at least one key, <id>:<base64 of 32 bytes>";
  const keys: SecretKey[] = [];
  for (const [index, entry] of entries.entries()) {
    const separator = entry.indexOf(":");
    const id = separator < 0 ? "" : entry.slice(0, separator);
    const encoded = separator < 0 ? "" : entry.slice(separator + 1);
    if (!SECRET_KEY_ID.test(id)) return `entry ${index + 1} must be <id>:<base64 of 32 bytes>, its id 1 to 16 letters, digits, - or _`;
    const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded) ? Buffer.from(encoded, "base64") : Buffer.alloc(0);
    if (key.length !== 32) return `key "${id}" must be 32 bytes in base64 (44 characters), such as \`openssl rand -base64 32\` prints`;
    if (keys.some((known) => known.id === id)) return `key id "${id}" is given twice`;
    keys.push({ id, key });
  }
  return keys;
};
