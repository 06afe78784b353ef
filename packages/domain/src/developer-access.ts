import { createHash, randomBytes } from "node:crypto";
import { Result } from "effect";
import { InvalidInput } from "./errors.ts";

/**
 * Access to the Developer area: a single-use sign-in link for one organization opens a session
 * that lasts a working day. Tokens are 256 random bits in base64url; only their SHA-256 is
 * stored, so a copy of the database signs nobody in.
 */

/** How long a sign-in link may be opened, once. */
export const SIGN_IN_LINK_LIFETIME_MS = 15 * 60_000;

/** How long a Developer-area session lasts: a working day. */
export const DEVELOPER_SESSION_LIFETIME_MS = 8 * 3600_000;

/** Who asked for a sign-in link: an operator's CLI, or the catering application for its user. */
export const SIGN_IN_REQUESTERS = ["cli", "application"] as const;
/** Who asked for a sign-in link. */
export type SignInRequester = (typeof SIGN_IN_REQUESTERS)[number];

/**
 * Why a sign-in link was made: asked for by a requester, or made and used at once to switch a
 * session between a live organization and its sandbox (`switch`: only such a sandbox session may
 * switch back to the live organization).
 */
export type SignInLinkOrigin = SignInRequester | "switch";

/** Why a sign-in link opens no session; each gets its own clear page. */
export type SignInRefusal = "used" | "expired" | "unknown";

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** A fresh random token (a link's or a session's) and the hash that is stored for it. */
export const generateAccessToken = (): { readonly token: string; readonly hash: string } => {
  const token = randomBytes(32).toString("base64url");
  return { token, hash: hashAccessToken(token) };
};

/** The stored form of a link's or a session's token. */
export const hashAccessToken = (token: string): string => createHash("sha256").update(token).digest("hex");

/** Whether `text` has the shape of a token we issue (anything else is refused before a lookup). */
export const isAccessToken = (text: string): boolean => TOKEN_PATTERN.test(text);

/** A per-session secret that the session's forms carry back (cross-site request forgery protection). */
export const generateFormSecret = (): string => randomBytes(32).toString("base64url");

/** Longest name of an API key, in characters (Unicode code points). */
export const API_KEY_NAME_MAX_LENGTH = 100;

/** An API key's name as entered, trimmed: 1 to 100 characters, no control characters. */
export const parseApiKeyName = (raw: string): Result.Result<string, InvalidInput> => {
  const name = raw.trim();
  if (name === "") return Result.fail(new InvalidInput({ message: "Give the key a name" }));
  if ([...name].length > API_KEY_NAME_MAX_LENGTH) {
    return Result.fail(new InvalidInput({ message: `A name may be at most ${API_KEY_NAME_MAX_LENGTH} characters` }));
  }
  if (/[\u0000-\u001f\u007f]/.test(name)) return Result.fail(new InvalidInput({ message: "A name may not contain control characters" }));
  if (!name.isWellFormed()) return Result.fail(new InvalidInput({ message: "A name must be valid Unicode text" }));
  return Result.succeed(name);
};
