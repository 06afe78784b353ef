import type { Effect } from "effect";
import { Result, Schema } from "effect";
import { type DatabaseUnavailable, InvalidInput } from "../errors.ts";
import { decodeInput } from "../input.ts";
import type { WrittenNoticeKind } from "./delivery-decision.ts";

/**
 * E-mail alerts to an organization's developers: the addresses it alerts (each confirmed by a link
 * mailed to it, so nobody is signed up by someone else) and what each notice's e-mail says. One
 * e-mail per notice and confirmed address, from the same notice rows as the operator's channel.
 */

/** What an alert e-mail tells: a notice stage, or that an endpoint which had one delivers again. */
export type AlertKind = WrittenNoticeKind;

/** How long a confirmation link may be used. */
export const ALERT_CONFIRMATION_LIFETIME_MS = 24 * 3600_000;

/** Longest e-mail address accepted (RFC 5321's path limit less the brackets). */
export const ALERT_EMAIL_MAX_LENGTH = 254;

/** At most this many of the endpoint's last errors are quoted in an alert. */
export const ALERT_LAST_ERRORS = 3;

const EMAIL_PATTERN = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** An address as entered, trimmed and lower-cased: a plain `local@domain` (no name, no comments), at most 254 characters. */
export const parseAlertEmail = (raw: string): Result.Result<string, InvalidInput> => {
  const email = raw.trim().toLowerCase();
  if (email === "") return Result.fail(new InvalidInput({ message: "Give an e-mail address" }));
  if (email.length > ALERT_EMAIL_MAX_LENGTH) {
    return Result.fail(new InvalidInput({ message: `An e-mail address may be at most ${ALERT_EMAIL_MAX_LENGTH} characters` }));
  }
  if (!EMAIL_PATTERN.test(email)) return Result.fail(new InvalidInput({ message: "email must be an address like dev@example.com" }));
  return Result.succeed(email);
};

/** `POST /cli/alerts`'s body (`platter alerts add` with a key): `{"email": "<address>"}`. */
const AlertAddressBody = Schema.Struct({
  email: Schema.String.annotate({ message: "email must be a string" }).annotateKey({ messageMissingKey: "email is required" }),
});

/** Reads an alert address request's JSON body: the address (trimmed, lower-cased), or `InvalidInput` naming the field. */
export const parseAlertAddressBody = (body: unknown): Result.Result<string, InvalidInput> =>
  Result.flatMap(decodeInput(AlertAddressBody, body), (request) => parseAlertEmail(request.email));

/** One failed attempt an alert quotes: when, and what the receiver answered or what went wrong. */
export interface AlertError {
  readonly at: string;
  readonly statusCode: number | null;
  readonly error: string | null;
}

/** What an alert e-mail is made from: the notice row, the endpoint's last errors and the link to its page. */
export interface AlertNotice {
  readonly kind: AlertKind;
  readonly endpointId: number;
  readonly endpointUrl: string;
  readonly reason: string;
  /** When the notice was written (ISO 8601, the database's time). */
  readonly at: string;
  readonly disablesAt: string | null;
  readonly lastErrors: ReadonlyArray<AlertError>;
  /** The endpoint's page in the Developer area. */
  readonly endpointPage: string;
}

/** A plain-text e-mail's subject and body. */
export interface MailContent {
  readonly subject: string;
  readonly text: string;
}

const HEADLINES: Readonly<Record<AlertKind, string>> = {
  failing: "is failing",
  disabling_soon: "is about to be disabled",
  disabled: "was disabled",
  recovered: "delivers again",
};

/** The alert e-mail for one notice, the same for every address it goes to. */
export const alertMail = (notice: AlertNotice): MailContent => {
  const errors = notice.lastErrors.length === 0 ? [] : [
    "",
    "Its last errors:",
    ...notice.lastErrors.map((failure) =>
      `- ${failure.at}: ${failure.statusCode === null ? "no answer" : `HTTP ${failure.statusCode}`}${failure.error === null ? "" : ` (${failure.error})`}`),
  ];
  return {
    subject: `Platter: webhook endpoint ${notice.endpointId} ${HEADLINES[notice.kind]}`,
    text: [
      `Your webhook endpoint ${notice.endpointUrl} (endpoint ${notice.endpointId}) ${HEADLINES[notice.kind]}.`,
      "",
      `Why: ${notice.reason}.`,
      ...(notice.disablesAt === null ? [] : [`It will be disabled at ${notice.disablesAt} unless a delivery succeeds before then.`]),
      `Noticed at ${notice.at}.`,
      ...errors,
      "",
      `See the endpoint: ${notice.endpointPage}`,
      "",
      "You get this e-mail because this address was confirmed for your organization's webhook alerts in Platter's Developer area; remove it there to stop them.",
    ].join("\n"),
  };
};

/** The e-mail asking an address to confirm it wants an organization's alerts. */
export const confirmationMail = (confirmLink: string): MailContent => ({
  subject: "Platter: confirm webhook alerts for this address",
  text: [
    "Someone in your organization's Platter Developer area asked for webhook alerts (failing, disabled and recovered endpoints) at this address.",
    "",
    `To receive them, open this link within 24 hours: ${confirmLink}`,
    "",
    "If you did not expect this, ignore this e-mail: the address gets nothing unless it is confirmed.",
  ].join("\n"),
});

/** One alert e-mail claimed for sending: committed `sending` under its lease before the SMTP call. */
export interface ClaimedAlertMail {
  readonly id: number;
  readonly leaseToken: string;
  /** This try's number (1 for the first). */
  readonly attempt: number;
  readonly email: string;
  readonly organizationId: number;
  readonly notice: Omit<AlertNotice, "lastErrors" | "endpointPage">;
}

/** How one alert e-mail's SMTP call ended: accepted, refused for good, or not sent and to be tried again later. */
export type AlertMailOutcome =
  | { readonly outcome: "sent" }
  | { readonly outcome: "failed"; readonly error: string }
  | { readonly outcome: "retry"; readonly error: string; readonly retryInMs: number };

/** How often a mail the SMTP server did not take (refused connection, a 4xx answer) is tried at most. */
export const ALERT_MAIL_MAX_ATTEMPTS = 5;

/** The wait before try number `attempt + 1` of a mail the SMTP server did not take: 1, 5, 30 and 120 minutes. */
export const ALERT_MAIL_RETRY_MS: ReadonlyArray<number> = [60_000, 300_000, 1_800_000, 7_200_000];

/**
 * The alert mail outbox as the mailer uses it (implemented in persistence, `alert-mails.ts`): fan the
 * notices out to their confirmed addresses, mark mails whose sender stopped mid-send abandoned, claim
 * due ones committed `sending`, read an endpoint's last errors, settle a mail by its lease holder.
 */
export interface AlertMailStorage {
  /** Writes the mails of notices not yet fanned out; returns how many mails. */
  readonly fanOut: () => Effect.Effect<number, DatabaseUnavailable>;
  /** Marks mails whose sender stopped mid-send `abandoned` (never sent again); returns how many. */
  readonly abandonStopped: () => Effect.Effect<number, DatabaseUnavailable>;
  /** Claims due mails, committed `sending` under a lease of `leaseMs`. */
  readonly claim: (leaseMs: number) => Effect.Effect<ReadonlyArray<ClaimedAlertMail>, DatabaseUnavailable>;
  /** The endpoint's last failed attempts, newest first. */
  readonly lastErrors: (organizationId: number, endpointId: number) => Effect.Effect<ReadonlyArray<AlertError>, DatabaseUnavailable>;
  /** Settles a claimed mail by its holder; false when its lease was lost. */
  readonly settle: (mail: ClaimedAlertMail, outcome: AlertMailOutcome) => Effect.Effect<boolean, DatabaseUnavailable>;
}
