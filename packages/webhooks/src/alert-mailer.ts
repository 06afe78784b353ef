import {
  type AlertError, ALERT_MAIL_MAX_ATTEMPTS, ALERT_MAIL_RETRY_MS, alertMail, type AlertMailOutcome, type AlertMailStorage, type ClaimedAlertMail, type MailContent,
} from "@platter/domain";
import { Effect } from "effect";
import { createTransport } from "nodemailer";
import type { OutboxChannel } from "./outbox-runner.ts";

/**
 * E-mail alerts to organizations' developers over SMTP (nodemailer): the sender, and the alert mail
 * outbox (`AlertMailStorage`) as a channel of the dispatcher's `OutboxRunner`. Each mail is committed
 * `sending` under its lease before the SMTP call and settled after it, so a mail is sent at most once
 * per notice and address whatever happens to dispatchers.
 */

/** `SMTP_URL` and `SMTP_FROM`: where mail goes (`smtp://`, `smtps://`, with credentials if the relay wants them) and who it is from. */
export interface MailSettings {
  readonly smtpUrl: string;
  readonly from: string;
}

/** Sends one plain-text e-mail; rejects with nodemailer's error when the SMTP server does not take it. */
export interface MailSender {
  readonly send: (to: string, content: MailContent) => Promise<void>;
  readonly close: () => void;
}

/** How long an SMTP call may take at most, all its waits together (connect, greeting, each answer): well within a mail's lease. */
const SMTP_CONNECTION_TIMEOUT_MS = 10_000;
const SMTP_GREETING_TIMEOUT_MS = 10_000;
const SMTP_SOCKET_TIMEOUT_MS = 30_000;

/** A sender over SMTP to `settings.smtpUrl`, one connection per mail (alerts are few). */
export const smtpMailSender = (settings: MailSettings): MailSender => {
  const transport = createTransport(
    { url: settings.smtpUrl, connectionTimeout: SMTP_CONNECTION_TIMEOUT_MS, greetingTimeout: SMTP_GREETING_TIMEOUT_MS, socketTimeout: SMTP_SOCKET_TIMEOUT_MS },
    { from: settings.from },
  );
  return {
    send: async (to, content) => {
      await transport.sendMail({ to, subject: content.subject, text: content.text });
    },
    close: () => transport.close(),
  };
};

/** Errors of a connection that never reached the SMTP dialogue: nothing was handed over. */
const NOT_CONNECTED = new Set(["ECONNECTION", "EDNS"]);

/**
 * How a failed SMTP call ends for try number `attempt`: tried again later when the server took
 * nothing (no connection, or a temporary 4xx answer), up to `ALERT_MAIL_MAX_ATTEMPTS`; failed for
 * good otherwise (a 5xx answer, or a connection lost mid-dialogue: it may have been taken, so never twice).
 */
export const failedMailOutcome = (error: unknown, attempt: number): AlertMailOutcome => {
  const details = error as { code?: unknown; responseCode?: unknown; message?: unknown };
  const text = String(details.message ?? error).slice(0, 500);
  const temporary = (typeof details.code === "string" && NOT_CONNECTED.has(details.code))
    || (typeof details.responseCode === "number" && details.responseCode >= 400 && details.responseCode < 500);
  const retryInMs = ALERT_MAIL_RETRY_MS[attempt - 1];
  return temporary && attempt < ALERT_MAIL_MAX_ATTEMPTS && retryInMs !== undefined
    ? { outcome: "retry", error: text, retryInMs }
    : { outcome: "failed", error: text };
};

/** What the alert mail channel tells its process: each mail's outcome, and mails given up by a stopped sender. */
export interface AlertMailObserver {
  readonly mailed?: (mail: ClaimedAlertMail, outcome: AlertMailOutcome) => void;
  readonly abandoned?: (count: number) => void;
}

/** The alert mail channel's settings: the Developer area's public origin (for the endpoint's link) and a mail's lease. */
export interface AlertMailChannelOptions {
  readonly developerAreaUrl: string;
  readonly leaseMs: number;
}

/** A mail claimed and what came of its SMTP call. */
export interface MailedAlert {
  readonly mail: ClaimedAlertMail;
  readonly outcome: AlertMailOutcome;
}

/**
 * The alert e-mails as an `OutboxRunner` channel: each turn marks mails whose sender stopped
 * mid-send abandoned, writes the mails of new notices (one per confirmed address, organizations
 * taking turns), claims due ones (committed `sending` under the one lease), sends them over SMTP and
 * settles each by its lease (sent, failed for good, or pending again after `ALERT_MAIL_RETRY_MS`).
 */
export const alertMailChannel = (
  storage: AlertMailStorage, sender: MailSender, options: AlertMailChannelOptions, observer: AlertMailObserver = {},
): OutboxChannel<ClaimedAlertMail, MailedAlert> => {
  /** Sends one mail (its endpoint's last errors read once per turn) and says how its SMTP call ended. */
  const mailOne = async (mail: ClaimedAlertMail, lastErrorsOf: (mail: ClaimedAlertMail) => Promise<ReadonlyArray<AlertError>>): Promise<MailedAlert> => {
    const lastErrors = await lastErrorsOf(mail);
    const content = alertMail({ ...mail.notice, lastErrors, endpointPage: `${options.developerAreaUrl}/webhooks/${mail.notice.endpointId}` });
    try {
      await sender.send(mail.email, content);
      return { mail, outcome: { outcome: "sent" } };
    } catch (error) {
      return { mail, outcome: failedMailOutcome(error, mail.attempt) };
    }
  };
  /**
   * An endpoint's last errors for a turn's mails, read once per endpoint however many addresses
   * its notices go to. They are a courtesy: a mail already committed `sending` goes out without
   * them rather than not at all.
   */
  const lastErrorsOnce = (): ((mail: ClaimedAlertMail) => Promise<ReadonlyArray<AlertError>>) => {
    const read = new Map<string, Promise<ReadonlyArray<AlertError>>>();
    return (mail) => {
      if (mail.notice.kind === "recovered") return Promise.resolve([]);
      const key = `${mail.organizationId}:${mail.notice.endpointId}`;
      let errors = read.get(key);
      if (errors === undefined) {
        errors = Effect.runPromise(storage.lastErrors(mail.organizationId, mail.notice.endpointId)).catch(() => []);
        read.set(key, errors);
      }
      return errors;
    };
  };
  return {
    prepare: async () => {
      const abandoned = await Effect.runPromise(storage.abandonStopped());
      if (abandoned > 0) observer.abandoned?.(abandoned);
      await Effect.runPromise(storage.fanOut());
    },
    claim: () => Effect.runPromise(storage.claim(options.leaseMs)),
    send: (mails) => {
      const lastErrorsOf = lastErrorsOnce();
      return Promise.all(mails.map((mail) => mailOne(mail, lastErrorsOf)));
    },
    record: async (mailed) => {
      await Promise.all(mailed.map(async ({ mail, outcome }) => {
        await Effect.runPromise(storage.settle(mail, outcome));
        observer.mailed?.(mail, outcome);
      }));
    },
    close: () => sender.close(),
  };
};
