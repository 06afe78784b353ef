import { Result } from "effect";
import { InvalidInput } from "../errors.ts";
import type { AuditDetails } from "../audit-log.ts";
import { ECHOED_INPUT_MAX_CHARACTERS, storableText } from "../storable-text.ts";
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from "./message.ts";

/**
 * A webhook endpoint as a developer enters it: its URL (the shape only; whether it may be reached
 * is the SSRF guard's call, which needs DNS) and the event types it subscribes to. Error texts are
 * shown beside the field.
 */

/** Longest endpoint URL accepted, in characters. */
export const ENDPOINT_URL_MAX_LENGTH = 2000;

/** An endpoint URL as entered, trimmed: present, at most 2,000 characters, no spaces or control characters, absolute http(s). */
export const parseEndpointUrl = (raw: string): Result.Result<string, InvalidInput> => {
  const url = raw.trim();
  const refuse = (message: string) => Result.fail(new InvalidInput({ message }));
  if (url === "") return refuse("Enter the URL that should receive the webhooks");
  if ([...url].length > ENDPOINT_URL_MAX_LENGTH) return refuse(`A URL may be at most ${ENDPOINT_URL_MAX_LENGTH} characters`);
  if (/[\s\u0000-\u001f\u007f]/.test(url) || !url.isWellFormed()) return refuse("A URL may not contain spaces or control characters");
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refuse("Enter a full URL, such as https://example.com/webhooks");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return refuse("The URL must start with https:// (or http://)");
  if (parsed.username !== "" || parsed.password !== "") return refuse("The URL may not contain a user name or password");
  return Result.succeed(url);
};

/**
 * An endpoint's origin: scheme, host and port as the HTTP client pools connections (`URL.origin`:
 * lower case, default port dropped, names in punycode, IP addresses normalized). Dispatchers count
 * attempts in flight per origin, so every spelling of one origin counts as that one origin.
 */
export const endpointOrigin = (url: string): string => new URL(url).origin;

/**
 * The form of a URL two registrations are compared in, so one organization registers a receiver
 * once however its URL is written: scheme and host lowercased (and a host's trailing dot dropped),
 * the default port removed, percent-escapes and IDN hosts as the URL standard writes them, the path
 * lowercased without its trailing slashes (`/Hook/` is `/hook`: a receiver that answers one
 * answers the other, so they are one target), the query's parameters in order, and the fragment
 * (never sent) dropped. Another query (`?to=a`), port or scheme stays another URL.
 */
export const normalizedEndpointUrl = (url: string): string => {
  const parsed = new URL(url.trim());
  parsed.hash = "";
  if (parsed.hostname.endsWith(".")) parsed.hostname = parsed.hostname.slice(0, -1);
  parsed.pathname = parsed.pathname.toLowerCase().replace(/\/+$/, "") || "/";
  parsed.searchParams.sort();
  return parsed.href;
};

/** Which event types an endpoint receives: every type (also those added later), or only those picked. */
export type SubscriptionChoice = "all" | "some";

/**
 * The subscription as a form sends it: `all` is every type (stored as none, see `subscribes`);
 * `some` needs at least one known type. Duplicates are dropped; the catalog's order is kept.
 */
export const parseSubscription = (
  choice: string,
  picked: ReadonlyArray<string>,
): Result.Result<ReadonlyArray<WebhookEventType>, InvalidInput> => {
  if (choice === "all") return Result.succeed([]);
  if (choice !== "some") return Result.fail(new InvalidInput({ message: "Choose every event type, or pick the ones to receive" }));
  const unknown = picked.find((type) => !(WEBHOOK_EVENT_TYPES as ReadonlyArray<string>).includes(type));
  if (unknown !== undefined) return Result.fail(new InvalidInput({ message: `Unknown event type "${storableText(unknown, ECHOED_INPUT_MAX_CHARACTERS)}"` }));
  if (picked.length === 0) return Result.fail(new InvalidInput({ message: "Pick at least one event type, or choose every event type" }));
  return Result.succeed(WEBHOOK_EVENT_TYPES.filter((type) => picked.includes(type)));
};

/** Whether `text` names an event type of the catalog. */
export const isWebhookEventType = (text: string): text is WebhookEventType =>
  (WEBHOOK_EVENT_TYPES as ReadonlyArray<string>).includes(text);

/** Longest description of an endpoint, in characters (Unicode code points; the column's check holds the same bound). */
export const ENDPOINT_DESCRIPTION_MAX_CHARACTERS = 500;

/**
 * An endpoint's description as entered: trimmed, empty for none (null), at most 500 characters,
 * and stored as `storableText` makes it (no NUL, no lone surrogate).
 */
export const parseEndpointDescription = (raw: string): Result.Result<string | null, InvalidInput> => {
  const text = raw.trim();
  if (text === "") return Result.succeed(null);
  if ([...text].length > ENDPOINT_DESCRIPTION_MAX_CHARACTERS) {
    return Result.fail(new InvalidInput({ message: `A description may be at most ${ENDPOINT_DESCRIPTION_MAX_CHARACTERS} characters` }));
  }
  return Result.succeed(storableText(text, ENDPOINT_DESCRIPTION_MAX_CHARACTERS));
};

/** What an edit of an endpoint may change; a field left out stays as it is. */
export interface EndpointEdit {
  /** The URL as entered (checked by `parseEndpointUrl` and the SSRF guard before it is stored). */
  readonly url?: string;
  /** The event types it receives (none: every type). */
  readonly eventTypes?: ReadonlyArray<WebhookEventType>;
  /** Its description as entered (see `parseEndpointDescription`; empty removes it). */
  readonly description?: string;
  readonly enabled?: boolean;
}

/** An endpoint's editable settings, as an edit's audit entry records them. */
export interface EndpointSettings {
  readonly url: string;
  readonly event_types: ReadonlyArray<string>;
  readonly description: string | null;
  readonly enabled: boolean;
}

/**
 * The audit details of an edit: each setting that changed, before and after (an event types' list
 * compared in order, as the catalog orders it); undefined when nothing changed.
 */
export const endpointEditDetails = (before: EndpointSettings, after: EndpointSettings): AuditDetails | undefined => {
  const changed = (Object.keys(before) as Array<keyof EndpointSettings>)
    .filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]));
  if (changed.length === 0) return undefined;
  return {
    before: Object.fromEntries(changed.map((key) => [key, before[key]])),
    after: Object.fromEntries(changed.map((key) => [key, after[key]])),
  };
};
