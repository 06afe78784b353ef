import type Router from "@koa/router";
import { AlertRecipients } from "@platter/application";
import { confirmationMail, errorAnswer, isAccessToken, MailNotConfigured, UnknownPage } from "@platter/domain";
import type { DeveloperSession, RequestStorage } from "@platter/persistence";
import type { MailSender } from "@platter/webhooks";
import type { Effect } from "effect";
import type { Context, Middleware } from "koa";
import { type AlertForm, alertsConfirmedPage, alertsPage, confirmAlertsPage } from "./alerts-pages.ts";
import { shownOnForm } from "./error-pages.ts";
import type { SignedIn } from "./layout.ts";
import { limited, unlimited } from "./organization-limits.ts";
import { page, recordIdOf, redirect } from "./page-responses.ts";
import { type FormRoute, linkRoute, sessionOf } from "./session.ts";


/** How long adding an address waits for the relay to take its confirmation mail before answering. */
const CONFIRMATION_MAIL_WAIT_MS = 10_000;

/**
 * Mails an added address its confirmation link (`origin`/alerts/confirm/token), waiting for the relay
 * a bounded time: true once it took the mail; false when it refused it or was slow (the link may still
 * arrive, and works). Used by the Alerts form and by `POST /cli/alerts`.
 */
export const mailConfirmationLink = (mailer: MailSender, origin: string, added: { readonly email: string; readonly token: string }): Promise<boolean> =>
  Promise.race([
    mailer.send(added.email, confirmationMail(`${origin}/alerts/confirm/${added.token}`)).then(() => true, () => false),
    new Promise<false>((done) => setTimeout(() => done(false), CONFIRMATION_MAIL_WAIT_MS).unref()),
  ]);

/**
 * The Alerts routes: the organization's alert e-mail addresses (`AlertRecipients`, audited
 * `alert_recipient.added` / `removed`), each added waiting for its confirmation link, which this
 * process mails at once (counted against `DEVELOPER_AREA_ALERT_ADDRESSES`, so one organization cannot
 * make Platter mail without bound, and capped by `ALERT_RECIPIENTS_PER_ORGANIZATION`); and the
 * confirmation link's page, whose button (never the GET: a link scanner's) confirms the address.
 */

/** How alert addresses are kept and confirmed. */
export interface AlertSettings {
  /** `ALERT_RECIPIENTS_PER_ORGANIZATION`. */
  readonly recipientsPerOrganization: number;
  /** Mails confirmation links (`SMTP_URL`); undefined: this Platter sends no e-mail, and no address can be added. */
  readonly mailer: MailSender | undefined;
}

/** What these routes share with the area's other routes. */
export interface AlertRouteKit {
  /** The area's public origin: confirmation links start with it. */
  readonly origin: string;
  readonly alerts: AlertSettings;
  readonly signedInOnly: Middleware;
  readonly post: FormRoute;
  readonly signedIn: (ctx: Context, session: DeveloperSession) => Promise<SignedIn>;
  readonly run: <A, E>(ctx: Context, program: Effect.Effect<A, E, RequestStorage>) => Promise<A>;
}

/** Adds the Alerts routes to `router`. */
export const addAlertRoutes = (router: Router, kit: AlertRouteKit): void => {
  const { origin, alerts, signedInOnly, post, signedIn, run } = kit;

  const listPage = async (ctx: Context, status: number, form?: AlertForm, notice?: string) => {
    const session = sessionOf(ctx);
    const recipients = await run(ctx, AlertRecipients.list(session));
    page(ctx, status, alertsPage(await signedIn(ctx, session), recipients, alerts.mailer !== undefined, form, notice));
  };

  router.get("/alerts", signedInOnly, async (ctx) => {
    // After an add (a redirect, so reloading the page sends nothing again): what became of its link's mail.
    const added = /^\d{1,15}$/.test(String(ctx.query["added"] ?? "")) ? Number(ctx.query["added"]) : undefined;
    const recipients = await run(ctx, AlertRecipients.list(sessionOf(ctx)));
    const email = recipients.find((recipient) => recipient.id === added && recipient.confirmed_at === null)?.email;
    const notice = email === undefined ? undefined : ctx.query["mailed"] === "1"
      ? `A confirmation link was mailed to ${email}: it gets alerts once the link is opened, within 24 hours.`
      : `The confirmation e-mail to ${email} could not be sent. Remove the address and add it again later.`;
    await listPage(ctx, 200, undefined, notice);
  });

  post("/alerts", limited("alertAddresses", "/alerts"), async (ctx, form, session) => {
    const email = form["email"] ?? "";
    const mailer = alerts.mailer;
    if (mailer === undefined) {
      // No SMTP_URL: the catalogue's refusal, shown beside the field.
      const refusal = errorAnswer(new MailNotConfigured());
      return listPage(ctx, refusal.status, { email, emailError: refusal.text });
    }
    const added = await run(ctx, shownOnForm(AlertRecipients.add(session, email, alerts.recipientsPerOrganization), "AlertRecipientLimitReached", "InvalidInput"));
    if (!added.done) return listPage(ctx, added.refusal.status, { email, emailError: added.refusal.text });
    const mailed = await mailConfirmationLink(mailer, origin, added.value);
    redirect(ctx, `/alerts?added=${added.value.id}&mailed=${mailed ? 1 : 0}`);
  });

  post("/alerts/:id/remove", unlimited("removing an address makes nothing and mails nothing; each address is removed once, and adds are limited"), async (ctx, _form, session) => {
    await run(ctx, AlertRecipients.remove(session, recordIdOf(ctx)));
    redirect(ctx, "/alerts");
  });

  // Opening the link only shows a button: a mail scanner's or preview's GET must not confirm.
  router.get("/alerts/confirm/:token", (ctx) => {
    // At most the area's origin as referrer, never the token's path; not `no-referrer`, whose button POST says `Origin: null` (refused).
    ctx.set("referrer-policy", "strict-origin");
    const token = String(ctx.params["token"]);
    if (!isAccessToken(token)) throw new UnknownPage();
    page(ctx, 200, confirmAlertsPage(token));
  });

  linkRoute(router, "/alerts/confirm/:token", origin,
    "no session: a confirmation link is used once, and links are only made by adds, which are limited", async (ctx) => {
      const token = String(ctx.params["token"]);
      if (!isAccessToken(token)) throw new UnknownPage();
      const confirmed = await run(ctx, AlertRecipients.confirm(token));
      page(ctx, confirmed === undefined ? 404 : 200, alertsConfirmedPage(confirmed?.email));
    });
};
