import { KEY_LIFETIME_CHOICES, ROLL_OVERLAP_CHOICES } from "@platter/domain";
import { type ApiKeyView } from "@platter/persistence";
import { html, type HtmlValue } from "./html.ts";
import { cardPage, formTokenField, type SignedIn, signedInPage } from "./layout.ts";

/** The Developer area's pages, rendered on the server; every interpolated string is escaped by `html`. */

// Made once: `toLocaleDateString` builds a formatter per call (about 0.2 ms each; a log page has 50 rows).
const DAY = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });
const TIME = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", timeZone: "UTC" });

/** `2026-11-24T10:05:00.000Z` → `24 Nov 2026` over `10:05 UTC` in a `<time>` element; nothing as "Never". */
export const when = (iso: string | null): HtmlValue => {
  if (iso === null) return html`<span class="muted">Never</span>`;
  const date = new Date(iso);
  const day = DAY.format(date);
  const time = TIME.format(date);
  return html`<time datetime="${iso}"><span class="day">${day}</span> <span class="time">${time} UTC</span></time>`;
};

/** A secret shown in a read-only field with a Copy button (the page's one; it reports into `#copy-status`). */
export const secretField = (id: string, label: string, secret: string): HtmlValue => html`<div class="field">
        <label for="${id}">${label}</label>
        <div class="secret">
          <input id="${id}" type="text" readonly spellcheck="false" autocomplete="off" value="${secret}">
          <button type="button" class="button button-primary" data-copy-from="${id}" data-copied-into="copy-status">Copy</button>
        </div>
        <p class="hint" id="copy-status" role="status" aria-live="polite"></p>
      </div>`;

const accessBadge = (access: ApiKeyView["access"]) =>
  access === "read" ? html`<span class="badge badge-read">Read-only</span>` : html`<span class="badge badge-write">Read/write</span>`;

const keyName = (key: ApiKeyView) => (key.name === "" ? html`<span class="muted">Unnamed key ${key.id}</span>` : key.name);

/** What the create form says about the last attempt: the values entered and the problem with them. */
export interface CreateForm {
  readonly name: string;
  readonly access: string;
  /** The lifetime chosen (`KEY_LIFETIME_CHOICES`' value; `never` by default). */
  readonly expires?: string;
  /** What is wrong with the lifetime, shown under it. */
  readonly expiresError?: string;
  /** What is wrong with the name, shown under it. */
  readonly nameError?: string;
  /** What is wrong with the access level, shown under its choices. */
  readonly accessError?: string;
}

/** Whether a key works now: neither revoked nor expired (a rolled key works until its overlap ends). */
const live = (key: ApiKeyView) => key.revoked_at === null && !key.expired;

/** A key's state in words: active, rolled (until when), expired, revoked. */
const keyStatus = (key: ApiKeyView): HtmlValue =>
  key.revoked_at !== null ? html`<span class="badge badge-revoked">Revoked</span> ${when(key.revoked_at)}`
  : key.expired ? html`<span class="badge badge-revoked">${key.replaced_by === null ? "Expired" : "Rolled"}</span> ${when(key.expires_at)}`
  : key.replaced_by !== null ? html`<span class="badge badge-warning">Rolled</span> <span class="hint">works until</span> ${when(key.expires_at)}`
  : key.expires_at !== null ? html`<span class="badge badge-active">Active</span> <span class="hint">expires</span> ${when(key.expires_at)}`
  : html`<span class="badge badge-active">Active</span>`;

const keyRow = (key: ApiKeyView) => html`<tr${live(key) ? "" : html` class="revoked"`}>
      <td class="name">${keyName(key)}</td>
      <td>${accessBadge(key.access)}</td>
      <td><code>${key.prefix}…</code></td>
      <td>${when(key.created_at)}</td>
      <td>${when(key.last_used_at)}</td>
      <td>${keyStatus(key)}</td>
      <td class="actions">${live(key)
        ? html`<div class="row-actions">${key.replaced_by === null
          ? html`<a class="button button-small" href="/api-keys/${key.id}/roll">Roll<span class="visually-hidden"> ${key.name || `key ${key.id}`}</span></a>`
          : ""}<a class="button button-small button-danger-quiet" href="/api-keys/${key.id}/revoke">Revoke<span class="visually-hidden"> ${key.name || `key ${key.id}`}</span></a></div>`
        : ""}</td>
    </tr>`;

/** The API keys page: the create form, then every key of the organization. */
export const apiKeysPage = (
  signedIn: SignedIn,
  keys: ReadonlyArray<ApiKeyView>,
  form: CreateForm = { name: "", access: "read" },
  notice?: string,
): string =>
  signedInPage(signedIn, "api-keys", "API keys", html`
    <div class="page-header">
      <h1>API keys</h1>
      <p class="lede">Keys authenticate your integration's requests to the Platter API.
        A read-only key may only read; a read/write key may also create events and clients.</p>
    </div>
    ${notice === undefined ? "" : html`<div class="notice" role="status">${notice}</div>`}
    <section class="panel" aria-labelledby="create-heading">
      <h2 id="create-heading">Create a key</h2>
      <form class="create-key" method="post" action="/api-keys" novalidate>
        ${formTokenField(signedIn.formToken)}
        <div class="field">
          <label for="key-name">Name</label>
          <input id="key-name" name="name" type="text" maxlength="100" required autocomplete="off"
            placeholder="e.g. Website booking form" value="${form.name}"${form.nameError ? html` aria-invalid="true" aria-describedby="key-name-error"` : ""}>
          ${form.nameError ? html`<p class="field-error" id="key-name-error">${form.nameError}</p>` : html`<p class="hint">So you can tell your keys apart later.</p>`}
        </div>
        <fieldset class="field"${form.accessError ? html` aria-describedby="key-access-error"` : ""}>
          <legend>Access</legend>
          <label class="choice"><input type="radio" name="access" value="read"${form.access === "read" ? html` checked` : ""}> Read-only <span class="hint">GET requests only</span></label>
          <label class="choice"><input type="radio" name="access" value="read_write"${form.access === "read_write" ? html` checked` : ""}> Read/write <span class="hint">also creates records</span></label>
          ${form.accessError ? html`<p class="field-error" id="key-access-error">${form.accessError}</p>` : ""}
        </fieldset>
        <div class="field">
          <label for="key-expires">Expires</label>
          <select id="key-expires" name="expires"${form.expiresError ? html` aria-invalid="true" aria-describedby="key-expires-error"` : ""}>
            ${KEY_LIFETIME_CHOICES.map((choice) => html`<option value="${choice.value}"${(form.expires ?? "never") === choice.value ? html` selected` : ""}>${choice.label}</option>`)}
          </select>
          ${form.expiresError ? html`<p class="field-error" id="key-expires-error">${form.expiresError}</p>` : html`<p class="hint">An expired key is refused like a revoked one (401).</p>`}
        </div>
        <div class="form-actions"><button type="submit" class="button button-primary">Create key</button></div>
      </form>
    </section>
    <section class="panel" aria-labelledby="keys-heading">
      <h2 id="keys-heading">Your keys</h2>
      ${keys.length === 0
        ? html`<p class="empty">No keys yet. Create one above.</p>`
        : html`<div class="table-scroll"><table class="keys">
        <thead><tr><th scope="col">Name</th><th scope="col">Access</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>
    ${keys.map(keyRow)}
        </tbody>
      </table></div>`}
    </section>`);

/** A new key's secret, shown this once, with a copy button; for a rolled key, until when the old one works. */
export const createdKeyPage = (
  signedIn: SignedIn,
  key: { readonly name: string; readonly access: ApiKeyView["access"]; readonly secret: string; readonly oldKeyWorksUntil?: string },
): string =>
  signedInPage(signedIn, "api-keys", "Your new API key", html`
    <div class="page-header">
      <p class="breadcrumb"><a href="/api-keys">API keys</a></p>
      <h1>Your new API key</h1>
    </div>
    <section class="panel">
      <div class="callout callout-warning" role="note"><strong>Copy this key now.</strong> For your security it is shown only once: it cannot be shown again, only revoked and replaced.</div>
      ${key.oldKeyWorksUntil === undefined ? "" : html`<p role="status">It replaces the rolled key, which keeps working until ${when(key.oldKeyWorksUntil)}: deploy the new key before then.</p>`}
      <dl class="facts">
        <div><dt>Name</dt><dd>${key.name}</dd></div>
        <div><dt>Access</dt><dd>${accessBadge(key.access)}</dd></div>
      </dl>
      ${secretField("new-key", "API key", key.secret)}
      <p>Send it in the <code>Authorization</code> header: <code>Authorization: Bearer platter_…</code></p>
      <div class="form-actions"><a class="button" href="/api-keys">Done</a></div>
    </section>`);

/** What a confirmation step says of the key it is about. */
const keyFacts = (key: ApiKeyView): HtmlValue => html`<dl class="facts">
        <div><dt>Name</dt><dd>${keyName(key)}</dd></div>
        <div><dt>Key</dt><dd><code>${key.prefix}…</code></dd></div>
        <div><dt>Access</dt><dd>${accessBadge(key.access)}</dd></div>
        <div><dt>Last used</dt><dd>${when(key.last_used_at)}</dd></div>
      </dl>`;

/** The confirmation step before a key is revoked. */
export const confirmRevokePage = (signedIn: SignedIn, key: ApiKeyView): string =>
  signedInPage(signedIn, "api-keys", "Revoke API key", html`
    <div class="page-header">
      <p class="breadcrumb"><a href="/api-keys">API keys</a></p>
      <h1>Revoke this key?</h1>
    </div>
    <section class="panel">
      ${keyFacts(key)}
      <div class="callout callout-danger" role="note">From its next request on, the API refuses this key with <code>401</code>. This cannot be undone.</div>
      <form method="post" action="/api-keys/${key.id}/revoke" class="form-actions">
        ${formTokenField(signedIn.formToken)}
        <button type="submit" class="button button-danger">Revoke key</button>
        <a class="button" href="/api-keys">Cancel</a>
      </form>
    </section>`);

/** The confirmation step before a key is rolled: how long the old secret keeps working. */
export const confirmRollPage = (signedIn: SignedIn, key: ApiKeyView, error?: string): string =>
  signedInPage(signedIn, "api-keys", "Roll API key", html`
    <div class="page-header">
      <p class="breadcrumb"><a href="/api-keys">API keys</a></p>
      <h1>Roll this key?</h1>
      <p class="lede">Rolling makes a new key with a new secret (same name, access and lifetime) and stops the old one after the overlap you choose, so you can deploy the new key first.</p>
    </div>
    <section class="panel">
      ${keyFacts(key)}
      <form method="post" action="/api-keys/${key.id}/roll">
        ${formTokenField(signedIn.formToken)}
        <fieldset class="field"${error ? html` aria-describedby="roll-overlap-error"` : ""}>
          <legend>The old key keeps working for</legend>
          ${ROLL_OVERLAP_CHOICES.map((choice) => html`<label class="choice"><input type="radio" name="overlap" value="${choice.value}"${choice.value === "24h" ? html` checked` : ""}> ${choice.label}</label>`)}
          ${error ? html`<p class="field-error" id="roll-overlap-error">${error}</p>` : ""}
        </fieldset>
        <div class="form-actions">
          <button type="submit" class="button button-primary">Roll key</button>
          <a class="button" href="/api-keys">Cancel</a>
        </div>
      </form>
    </section>`);

/** A page without a session: a title, what happened and what to do. */
export const messagePage = (title: string, paragraphs: ReadonlyArray<HtmlValue>, action?: { readonly href: string; readonly label: string }): string =>
  cardPage(title, html`
    <h1>${title}</h1>
    ${paragraphs.map((paragraph) => html`<p>${paragraph}</p>`)}
    ${action === undefined ? "" : html`<p><a class="button button-primary" href="${action.href}">${action.label}</a></p>`}`);

/**
 * What a sign-in link opens: where it leads and a button that uses it. The button POSTs the link
 * back, so only a person's click starts a session, never a link scanner's GET.
 */
export const continueSignInPage = (organizationName: string, token: string): string =>
  cardPage("Sign in", html`
    <h1>Continue to the Developer area of ${organizationName}</h1>
    <p>This sign-in link works once: continuing signs you in on this browser for a working day.</p>
    <form method="post" action="/sign-in/${token}">
      <button type="submit" class="button button-primary">Continue</button>
    </form>`);

/** How to get a sign-in link: said on every page that asks for one. */
export const howToGetALink = html`To get a new link, open the Developer area from the catering application, or ask an
  operator (<code>platter developer-area link --org &lt;id&gt;</code>). Each link signs in once, within 15 minutes.`;
