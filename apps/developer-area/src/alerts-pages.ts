import type { AlertRecipientView } from "@platter/persistence";
import { html } from "./html.ts";
import { cardPage, formTokenField, type SignedIn, signedInPage } from "./layout.ts";
import { when } from "./pages.ts";

/**
 * The Alerts page: the e-mail addresses told when the organization's webhook endpoints fail, are
 * about to be disabled, are disabled or deliver again; each waits for its confirmation link to be
 * opened before it is mailed anything else. And the page a confirmation link opens.
 */

/** The add form as entered, and the refusal shown beside its field. */
export interface AlertForm {
  readonly email: string;
  readonly emailError?: string;
}

const recipientRow = (signedIn: SignedIn, recipient: AlertRecipientView) => html`<tr>
      <td class="name">${recipient.email}</td>
      <td data-label="Status">${recipient.confirmed_at !== null
        ? html`<span class="badge badge-active">Confirmed</span>`
        : recipient.link_expired
          ? html`<span class="badge">Link expired: remove it and add it again</span>`
          : html`<span class="badge">Waiting for confirmation</span>`}</td>
      <td data-label="Since">${when(recipient.confirmed_at ?? recipient.created_at)}</td>
      <td class="actions">
        <form method="post" action="/alerts/${recipient.id}/remove">
          ${formTokenField(signedIn.formToken)}
          <button type="submit" class="button button-danger-quiet">Remove<span class="visually-hidden"> ${recipient.email}</span></button>
        </form>
      </td>
    </tr>`;

/** The organization's alert addresses and the form adding one; `mailOn` false when this Platter sends no e-mail. */
export const alertsPage = (
  signedIn: SignedIn, recipients: ReadonlyArray<AlertRecipientView>, mailOn: boolean, form: AlertForm = { email: "" }, notice?: string,
): string =>
  signedInPage(signedIn, "alerts", "Alerts", html`
    <div class="page-header">
      <h1>Alerts</h1>
      <p class="lede">E-mail your developers when a webhook endpoint starts failing, is about to be disabled, is disabled, or delivers again:
        one e-mail per change, with the reason, the last errors and a link to the endpoint.</p>
    </div>
    ${notice === undefined ? "" : html`<div class="notice" role="status">${notice}</div>`}
    ${mailOn ? "" : html`<div class="notice" role="status">This Platter sends no e-mail (its operator has not set <code>SMTP_URL</code>): addresses cannot be added.</div>`}
    <section class="panel" aria-labelledby="add-heading">
      <h2 id="add-heading">Add an address</h2>
      <form class="add-alert" method="post" action="/alerts" novalidate>
        ${formTokenField(signedIn.formToken)}
        <div class="field">
          <label for="alert-email">E-mail address</label>
          <input id="alert-email" name="email" type="email" maxlength="254" required autocomplete="email"
            placeholder="e.g. oncall@example.com" value="${form.email}"${form.emailError ? html` aria-invalid="true" aria-describedby="alert-email-error"` : ""}>
          ${form.emailError
            ? html`<p class="field-error" id="alert-email-error">${form.emailError}</p>`
            : html`<p class="hint">We mail it a link; it gets alerts only once that link is opened, within 24 hours.</p>`}
        </div>
        <div class="form-actions"><button type="submit" class="button button-primary"${mailOn ? "" : " disabled"}>Send confirmation link</button></div>
      </form>
    </section>
    <section class="panel" aria-labelledby="alerts-heading">
      <h2 id="alerts-heading">Addresses</h2>
      ${recipients.length === 0
        ? html`<p class="hint">No address is alerted yet.</p>`
        : html`<div class="table-scroll"><table class="keys alerts">
        <thead><tr><th scope="col">Address</th><th scope="col">Status</th><th scope="col">Since</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>
    ${recipients.map((recipient) => recipientRow(signedIn, recipient))}
        </tbody>
      </table></div>`}
    </section>`);

/** What a confirmation link opens: a button, so only a person's click confirms, never a link scanner's GET. */
export const confirmAlertsPage = (token: string): string =>
  cardPage("Confirm alerts", html`
    <h1>Receive webhook alerts at this address?</h1>
    <p>Someone in your organization's Platter Developer area asked for e-mails when its webhook endpoints fail or recover.</p>
    <form method="post" action="/alerts/confirm/${token}">
      <button type="submit" class="button button-primary">Confirm</button>
    </form>`);

/** After the button: confirmed, or the link was not valid (unknown, used, or older than 24 hours). */
export const alertsConfirmedPage = (email: string | undefined): string =>
  cardPage(email === undefined ? "Link not valid" : "Alerts confirmed", email === undefined
    ? html`<h1>This link is not valid</h1><p>It was already used, or is older than 24 hours. Ask your team to add the address again.</p>`
    : html`<h1>Alerts confirmed</h1><p>${email} now receives your organization's webhook alerts. Remove it in the Developer area's Alerts page to stop them.</p>`);
