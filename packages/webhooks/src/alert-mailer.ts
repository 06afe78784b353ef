import {
  type AlertError, ALERT_MAIL_MAX_ATTEMPTS, ALERT_MAIL_RETRY_MS, alertMail, type AlertMailOutcome, type AlertMailStorage, type ClaimedAlertMail, type MailContent,
} from "@platter/domain";
import { Effect } from "effect";
import { createTransport } from "nodemailer";

/**
 * E-mail alerts to organizations' developers over SMTP (nodemailer): the sender, and the mailer loop
 * a dispatcher runs on the alert mail outbox (`AlertMailStorage`). Each mail is committed `sending`
 * under its lease before the SMTP call and settled after it, so a mail is sent at most once per
 * notice and address whatever happens to dispatchers.
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

/** What the mailer loop tells its process: each mail's outcome, and a round that failed. */
export interface AlertMailerObserver {
  readonly mailed?: (mail: ClaimedAlertMail, outcome: AlertMailOutcome) => void;
  readonly abandoned?: (count: number) => void;
  readonly failedRound?: (error: unknown) => void;
}

/** The mailer's settings: the Developer area's public origin (for the endpoint's link), a mail's lease, how often it looks for work. */
export interface AlertMailerOptions {
  readonly developerAreaUrl: string;
  readonly leaseMs: number;
  readonly pollIntervalMs: number;
}

/**
 * The mailer loop: each round marks mails whose sender stopped mid-send abandoned, writes the mails
 * of new notices (one per confirmed address), claims due ones (committed `sending`), sends them and
 * settles each by its lease. It rounds again at once while there is work, else after
 * `pollIntervalMs` (or a `wake`).
 */
export class AlertMailer {
  private running = false;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;

  private readonly storage: AlertMailStorage;
  private readonly sender: MailSender;
  private readonly options: AlertMailerOptions;
  private readonly observer: AlertMailerObserver;

  constructor(storage: AlertMailStorage, sender: MailSender, options: AlertMailerOptions, observer: AlertMailerObserver = {}) {
    this.storage = storage;
    this.sender = sender;
    this.options = options;
    this.observer = observer;
  }

  /** Starts the loop. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Looks for work now rather than after the poll interval. */
  wake(): void {
    this.wakeUp?.();
  }

  /** Stops after the round in progress (its mails settled), and closes the sender. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    this.sender.close();
  }

  /** One round; returns how many mails it claimed. */
  async round(): Promise<number> {
    const abandoned = await Effect.runPromise(this.storage.abandonStopped());
    if (abandoned > 0) this.observer.abandoned?.(abandoned);
    await Effect.runPromise(this.storage.fanOut());
    const claimed = await Effect.runPromise(this.storage.claim(this.options.leaseMs));
    const lastErrors = this.lastErrorsOnce();
    await Promise.all(claimed.map((mail) => this.send(mail, lastErrors)));
    return claimed.length;
  }

  /**
   * An endpoint's last errors for a round's mails, read once per endpoint however many addresses
   * its notices go to. They are a courtesy: a mail already committed `sending` goes out without
   * them rather than not at all.
   */
  private lastErrorsOnce(): (mail: ClaimedAlertMail) => Promise<ReadonlyArray<AlertError>> {
    const read = new Map<string, Promise<ReadonlyArray<AlertError>>>();
    return (mail) => {
      if (mail.notice.kind === "recovered") return Promise.resolve([]);
      const key = `${mail.organizationId}:${mail.notice.endpointId}`;
      let errors = read.get(key);
      if (errors === undefined) {
        errors = Effect.runPromise(this.storage.lastErrors(mail.organizationId, mail.notice.endpointId)).catch(() => []);
        read.set(key, errors);
      }
      return errors;
    };
  }

  private async send(mail: ClaimedAlertMail, lastErrorsOf: (mail: ClaimedAlertMail) => Promise<ReadonlyArray<AlertError>>): Promise<void> {
    const lastErrors = await lastErrorsOf(mail);
    const content = alertMail({ ...mail.notice, lastErrors, endpointPage: `${this.options.developerAreaUrl}/webhooks/${mail.notice.endpointId}` });
    let outcome: AlertMailOutcome;
    try {
      await this.sender.send(mail.email, content);
      outcome = { outcome: "sent" };
    } catch (error) {
      outcome = failedMailOutcome(error, mail.attempt);
    }
    await Effect.runPromise(this.storage.settle(mail, outcome));
    this.observer.mailed?.(mail, outcome);
  }

  private async run(): Promise<void> {
    while (this.running) {
      let claimed = 0;
      try {
        claimed = await this.round();
      } catch (error) {
        this.observer.failedRound?.(error);
      }
      if (claimed > 0 || !this.running) continue;
      await new Promise<void>((done) => {
        const timer = setTimeout(done, this.options.pollIntervalMs);
        this.wakeUp = () => {
          clearTimeout(timer);
          done();
        };
      });
      this.wakeUp = undefined;
    }
  }
}
