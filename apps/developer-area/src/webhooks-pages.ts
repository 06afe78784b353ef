import { describedThrottle, ENDPOINT_DESCRIPTION_MAX_CHARACTERS, MESSAGE_TYPES } from "@platter/domain";
import type { EndpointDelivery, EndpointHealth, EndpointNoticeView, EndpointSecret, WebhookEndpointOverview } from "@platter/persistence";
import { endpointNoticeBanner, noticeBanners } from "./endpoint-notice-banners.ts";
import { html, type HtmlValue } from "./html.ts";
import { formTokenField, type SignedIn, signedInPage } from "./layout.ts";
import { responseBodyCut } from "./deliveries-pages.ts";
import { throttlePanel, type ThrottleForm } from "./endpoint-throttle-panel.ts";
import { secretField, when } from "./pages.ts";

/**
 * The Webhooks pages: the organization's endpoints with their health, adding one, an endpoint's
 * page (signing secret, test event, enable/disable, delete), editing one, the rotation's and deletion's confirmations and a test
 * event's delivery. Every interpolated string is escaped by `html`; a URL is only ever text here.
 */

/** What the add form says about the last attempt: the values entered and the problem with each. */
export interface EndpointForm {
  readonly url: string;
  /** `all` or `some` (see the domain's `parseSubscription`); anything else checks neither radio. */
  readonly choice: string;
  readonly picked: ReadonlyArray<string>;
  readonly urlError?: string;
  readonly typesError?: string;
}

/** What the edit form says: the values entered (or the endpoint's own at first), and the problem with each. */
export interface EditEndpointForm extends EndpointForm {
  readonly description: string;
  readonly descriptionError?: string;
}

/** The edit form as first shown: the endpoint's settings as they are. */
export const editFormOf = (endpoint: WebhookEndpointOverview): EditEndpointForm => ({
  url: endpoint.url,
  choice: endpoint.event_types.length === 0 ? "all" : "some",
  picked: endpoint.event_types,
  description: endpoint.description ?? "",
});

/** The add form as first shown: every event type. */
export const EMPTY_ENDPOINT_FORM: EndpointForm = { url: "", choice: "all", picked: [] };

/** What the test-event form says: the type chosen last and why it was refused. */
export interface TestEventForm {
  readonly type: string;
  readonly error?: string;
}

/** What the endpoint page shows besides the endpoint: a notice, the secret when asked for, the test form. */
export interface EndpointPageState {
  readonly notice?: string;
  readonly secret?: EndpointSecret;
  readonly testForm?: TestEventForm;
  /** The throttle form as last sent, when it was refused. */
  readonly throttleForm?: ThrottleForm;
  /** The organization's active operational notices: this endpoint's is shown as a banner (and replaces the plain disabled callout). */
  readonly operationalNotices?: ReadonlyArray<EndpointNoticeView>;
}

const percent = (health: EndpointHealth) => Math.floor((health.succeeded / health.attempts) * 1000) / 10;

const healthClass = (health: EndpointHealth) => {
  const rate = percent(health);
  return rate >= 95 ? "health-good" : rate >= 50 ? "health-fair" : "health-poor";
};

/** The success rate over 24 h as a figure and its base; nothing sent yet says so. */
const successRate = (health: EndpointHealth): HtmlValue =>
  health.attempts === 0
    ? html`<span class="muted">No attempts</span>`
    : html`<span class="health ${healthClass(health)}">${percent(health)} %</span> <span class="muted small">of ${health.attempts} ${health.attempts === 1 ? "attempt" : "attempts"}</span>`;

/** An attempt's answer: its status code as a badge, or that it got none. */
const answer = (statusCode: number | null): HtmlValue =>
  statusCode !== null
    ? html`<span class="badge ${statusCode >= 200 && statusCode < 300 ? "badge-active" : "badge-failed"}">${statusCode}</span>`
    : html`<span class="badge badge-failed">No answer</span>`;

/**
 * The last attempt: its answer and time on one line, and below them the error that stopped it, on
 * lines of its own (an error can be long and hold no space to wrap at: an OpenSSL source path).
 */
const lastAttempt = (health: EndpointHealth): HtmlValue =>
  health.last_attempt_at === null
    ? html`<span class="muted">None in 24 h</span>`
    : html`<div class="last-attempt">${answer(health.last_status_code)} ${when(health.last_attempt_at)}</div>${
      health.last_error === null ? "" : html`<p class="attempt-error">${health.last_error}</p>`}`;

const eventTypes = (types: ReadonlyArray<string>): HtmlValue =>
  types.length === 0
    ? html`<span class="muted">All event types</span>`
    : html`<ul class="type-list">${types.map((type) => html`<li><code>${type}</code></li>`)}</ul>`;

/** Enabled, or disabled (and why, unless said elsewhere on the page); an open circuit says it is paused. */
const status = (endpoint: WebhookEndpointOverview, withReason = true): HtmlValue => html`${endpoint.enabled
  ? html`<span class="badge badge-active">Enabled</span>`
  : html`<span class="badge badge-revoked">Disabled</span>${endpoint.disabled_reason === null || !withReason ? "" : html`<p class="reason">${sentence(endpoint.disabled_reason)}</p>`}`}${
  endpoint.circuit_open_until === null ? "" : html` <span class="badge badge-paused" title="Too many failures in a row">Paused</span>`}`;

/** `endpoint answered 410 Gone` → `Endpoint answered 410 Gone.` */
const sentence = (reason: string) => `${reason.charAt(0).toUpperCase()}${reason.slice(1)}${reason.endsWith(".") ? "" : "."}`;

/** A local listener's marker: `platter listen` forwards its deliveries, and whether it is connected now. */
const listenerBadge = (endpoint: WebhookEndpointOverview): HtmlValue =>
  endpoint.listener === null
    ? ""
    : html` <span class="badge ${endpoint.listener.connected ? "badge-active" : "badge-read"}" title="Forwarded by platter listen with key ${endpoint.listener.key_prefix}…">platter listen${endpoint.listener.connected ? " · connected" : " · offline"}</span>`;

const endpointRow = (endpoint: WebhookEndpointOverview) => html`<tr${endpoint.enabled ? "" : html` class="revoked"`}>
      <td class="url"><a href="/webhooks/${endpoint.id}">${endpoint.url}</a>${listenerBadge(endpoint)}${
        endpoint.description === null ? "" : html`<p class="hint endpoint-description">${endpoint.description}</p>`}</td>
      <td>${eventTypes(endpoint.event_types)}</td>
      <td class="status">${status(endpoint)}</td>
      <td>${successRate(endpoint.health)}</td>
      <td>${lastAttempt(endpoint.health)}</td>
    </tr>`;

/** The Webhooks page: every endpoint of the organization with its health over the last 24 hours. */
export const webhooksPage = (
  signedIn: SignedIn, endpoints: ReadonlyArray<WebhookEndpointOverview>, notices: ReadonlyArray<EndpointNoticeView> = [], done?: string,
): string =>
  signedInPage(signedIn, "webhooks", "Webhooks", html`
    <div class="page-header page-header-split">
      <div>
        <h1>Webhooks</h1>
        <p class="lede">When something happens in your account, Platter sends a signed <code>POST</code> to each endpoint
          subscribed to its event type, signed the Standard Webhooks way, and retries on a back-off schedule until it answers <code>2xx</code>.</p>
      </div>
      <a class="button button-primary" href="/webhooks/new">Add endpoint</a>
    </div>
    ${done === undefined ? "" : html`<div class="notice" role="status">${done}</div>`}
    ${noticeBanners(notices)}
    <section class="panel" aria-labelledby="endpoints-heading">
      <h2 id="endpoints-heading">Endpoints</h2>
      ${endpoints.length === 0
        ? html`<p class="empty">No endpoints yet. <a href="/webhooks/new">Add one</a> to start receiving webhooks.</p>`
        : html`<div class="table-scroll"><table class="endpoints">
        <thead><tr><th scope="col">Endpoint</th><th scope="col">Event types</th><th scope="col">Status</th><th scope="col">Success, 24 h</th><th scope="col">Last attempt</th></tr></thead>
        <tbody>
    ${endpoints.map(endpointRow)}
        </tbody>
      </table></div>`}
    </section>`);

const typeChoice = (type: (typeof MESSAGE_TYPES)[number], form: EndpointForm) => html`
          <label class="choice choice-type"><input type="checkbox" name="type:${type.type}"${form.picked.includes(type.type) ? html` checked` : ""}>
            <span><code>${type.type}</code> <span class="hint">${type.description}</span></span></label>`;

/** The URL field of the add and edit forms, with its problem beside it. */
const urlField = (form: EndpointForm) => html`<div class="field">
          <label for="endpoint-url">Endpoint URL</label>
          <input id="endpoint-url" name="url" type="url" inputmode="url" maxlength="2000" required autocomplete="off" spellcheck="false"
            placeholder="https://example.com/webhooks/platter" value="${form.url}"${form.urlError ? html` aria-invalid="true" aria-describedby="endpoint-url-error"` : ""}>
          ${form.urlError
            ? html`<p class="field-error" id="endpoint-url-error">${form.urlError}</p>`
            : html`<p class="hint">A public <code>https://</code> address of yours that answers a <code>POST</code> with <code>2xx</code>.</p>`}
        </div>`;

/** The event types of the add and edit forms: every type, or only those ticked. */
const eventTypesField = (form: EndpointForm) => html`<fieldset class="field"${form.typesError ? html` aria-describedby="event-types-error"` : ""}>
          <legend>Event types</legend>
          <label class="choice"><input type="radio" name="choice" value="all"${form.choice === "all" ? html` checked` : ""}> Every event type <span class="hint">also those added later</span></label>
          <label class="choice"><input type="radio" name="choice" value="some"${form.choice === "some" ? html` checked` : ""}> Only the types ticked below</label>
          <div class="type-choices">${MESSAGE_TYPES.map((type) => typeChoice(type, form))}
          </div>
          ${form.typesError ? html`<p class="field-error" id="event-types-error">${form.typesError}</p>` : ""}
        </fieldset>`;

/** The form that adds an endpoint: its URL, and every event type or only those ticked. */
export const newEndpointPage = (signedIn: SignedIn, form: EndpointForm = EMPTY_ENDPOINT_FORM): string =>
  signedInPage(signedIn, "webhooks", "Add an endpoint", html`
    <div class="page-header">
      <p class="breadcrumb"><a href="/webhooks">Webhooks</a></p>
      <h1>Add an endpoint</h1>
    </div>
    <section class="panel">
      <form method="post" action="/webhooks" novalidate>
        ${formTokenField(signedIn.formToken)}
        ${urlField(form)}
        ${eventTypesField(form)}
        <div class="form-actions">
          <button type="submit" class="button button-primary">Add endpoint</button>
          <a class="button" href="/webhooks">Cancel</a>
        </div>
      </form>
    </section>`);

/** The form that edits an endpoint: its URL, description and event types (enabling and disabling stay on its page). */
export const editEndpointPage = (signedIn: SignedIn, endpoint: WebhookEndpointOverview, form: EditEndpointForm): string =>
  signedInPage(signedIn, "webhooks", "Edit endpoint", html`
    <div class="page-header">
      <p class="breadcrumb"><a href="/webhooks/${endpoint.id}">${endpoint.url}</a></p>
      <h1>Edit endpoint</h1>
    </div>
    <section class="panel">
      <form method="post" action="/webhooks/${endpoint.id}/edit" novalidate>
        ${formTokenField(signedIn.formToken)}
        ${urlField(form)}
        <p class="hint">A new URL is checked as at registration. Deliveries not yet sent go to it; those already sent stay in the log as they were.</p>
        <div class="field">
          <label for="endpoint-description">Description <span class="hint">optional</span></label>
          <textarea id="endpoint-description" name="description" rows="3" maxlength="${ENDPOINT_DESCRIPTION_MAX_CHARACTERS}"
            placeholder="What this endpoint is for: which system receives it, who owns it"${form.descriptionError ? html` aria-invalid="true" aria-describedby="endpoint-description-error"` : ""}>${form.description}</textarea>
          ${form.descriptionError
            ? html`<p class="field-error" id="endpoint-description-error">${form.descriptionError}</p>`
            : html`<p class="hint">For you and your team; at most ${ENDPOINT_DESCRIPTION_MAX_CHARACTERS} characters.</p>`}
        </div>
        ${eventTypesField(form)}
        <div class="form-actions">
          <button type="submit" class="button button-primary">Save changes</button>
          <a class="button" href="/webhooks/${endpoint.id}">Cancel</a>
        </div>
      </form>
    </section>`);

const secretPanel = (signedIn: SignedIn, endpoint: WebhookEndpointOverview, secret: EndpointSecret | undefined) => html`
    <section class="panel" aria-labelledby="secret-heading">
      <h2 id="secret-heading">Signing secret</h2>
      <p>Every delivery carries <code>webhook-id</code>, <code>webhook-timestamp</code> and <code>webhook-signature</code> headers:
        verify them with this secret (any Standard Webhooks library does it in one call) before trusting a message.</p>
      ${secret === undefined
        ? html`<div class="form-actions">
        <form method="post" action="/webhooks/${endpoint.id}/secret">
          ${formTokenField(signedIn.formToken)}
          <button type="submit" class="button">Reveal secret</button>
        </form>
        <a class="button button-quiet" href="/webhooks/${endpoint.id}/rotate">Rotate secret…</a>
      </div>`
        : html`${secretField("signing-secret", "Signing secret", secret.secret)}
      ${secret.previous_secret_until === null
        ? ""
        : html`<p class="callout callout-warning" role="note">The previous secret keeps signing beside this one until ${when(secret.previous_secret_until)}: switch your receiver to this one before then.</p>`}
      <div class="form-actions">
        <a class="button" href="/webhooks/${endpoint.id}">Hide secret</a>
        <a class="button button-quiet" href="/webhooks/${endpoint.id}/rotate">Rotate secret…</a>
      </div>`}
    </section>`;

const testPanel = (signedIn: SignedIn, endpoint: WebhookEndpointOverview, form: TestEventForm | undefined) => html`
    <section class="panel" aria-labelledby="test-heading">
      <h2 id="test-heading">Send a test event</h2>
      <p>Sends the event catalog's example message of the type you choose to this endpoint only, signed like any other delivery, and shows you the attempt.</p>
      ${form?.error === undefined ? "" : html`<div class="callout callout-danger" role="alert">${form.error}</div>`}
      <form method="post" action="/webhooks/${endpoint.id}/test" class="inline-form">
        ${formTokenField(signedIn.formToken)}
        <div class="field">
          <label for="test-type">Event type</label>
          <select id="test-type" name="type">${MESSAGE_TYPES.map(({ type }) => html`
            <option value="${type}"${type === (form?.type ?? endpoint.event_types[0] ?? MESSAGE_TYPES[0].type) ? html` selected` : ""}>${type}</option>`)}
          </select>
        </div>
        <button type="submit" class="button button-primary"${endpoint.enabled ? "" : html` disabled`}>Send test event</button>
      </form>
      ${endpoint.enabled ? "" : html`<p class="hint">Enable the endpoint to send it a test event.</p>`}
    </section>`;

const togglePanel = (signedIn: SignedIn, endpoint: WebhookEndpointOverview) => html`
    <section class="panel" aria-labelledby="toggle-heading">
      <h2 id="toggle-heading">${endpoint.enabled ? "Disable this endpoint" : "Enable this endpoint"}</h2>
      <p>${endpoint.enabled
        ? "While it is disabled, nothing is sent to it: new events are not queued for it, and deliveries already queued wait until it is enabled again."
        : "Enabling it gives it a fresh start: its failure window begins again, and deliveries still queued for it are sent."}</p>
      <form method="post" action="/webhooks/${endpoint.id}/${endpoint.enabled ? "disable" : "enable"}">
        ${formTokenField(signedIn.formToken)}
        ${endpoint.enabled
          ? html`<button type="submit" class="button button-danger-quiet">Disable endpoint</button>`
          : html`<button type="submit" class="button button-primary">Enable endpoint</button>`}
      </form>
    </section>`;

/** The way to delete an endpoint: a link to the confirmation page (a local listener goes with its key, so it has none). */
const deletePanel = (endpoint: WebhookEndpointOverview) => endpoint.listener !== null ? "" : html`
    <section class="panel" aria-labelledby="delete-heading">
      <h2 id="delete-heading">Delete this endpoint</h2>
      <p>Deleting it stops every delivery to it and destroys its signing secret; its delivery history stays readable until retention removes it.</p>
      <a class="button button-danger-quiet" href="/webhooks/${endpoint.id}/delete">Delete endpoint…</a>
    </section>`;

/** An endpoint's page: what it receives and how it fares, its signing secret, a test event, enable/disable, delete. */
export const endpointPage = (signedIn: SignedIn, endpoint: WebhookEndpointOverview, state: EndpointPageState = {}): string =>
  signedInPage(signedIn, "webhooks", "Webhook endpoint", html`
    <div class="page-header page-header-split">
      <div class="page-header-main">
        <p class="breadcrumb"><a href="/webhooks">Webhooks</a></p>
        <h1 class="endpoint-url">${endpoint.url}</h1>
        ${endpoint.description === null ? "" : html`<p class="lede endpoint-description">${endpoint.description}</p>`}
      </div>
      ${endpoint.listener === null ? html`<a class="button" href="/webhooks/${endpoint.id}/edit">Edit endpoint</a>` : ""}
    </div>
    ${state.notice === undefined ? "" : html`<div class="notice" role="status">${state.notice}</div>`}
    ${endpointNoticeBanner(state.operationalNotices ?? [], endpoint.id)}
    ${endpoint.listener === null
      ? ""
      : html`<div class="callout callout-info" role="note"><strong>Local listener.</strong> <code>platter listen</code> with key <code>${endpoint.listener.key_prefix}…</code>
        forwards this endpoint's deliveries to this URL on its own machine, and its answers are recorded as the attempts.
        ${endpoint.listener.connected ? "It is connected now." : "It is not connected: it gets new deliveries only while it is."}</div>`}
    ${endpoint.enabled || endpoint.disabled_reason === null || (state.operationalNotices ?? []).some((n) => n.endpoint_id === endpoint.id && n.kind === "disabled")
      ? ""
      : html`<div class="callout callout-warning" role="note"><strong>Disabled.</strong> ${sentence(endpoint.disabled_reason)} Nothing is sent to it until it is enabled.</div>`}
    ${endpoint.circuit_open_until === null
      ? ""
      : html`<div class="callout callout-warning" role="note"><strong>Paused after repeated failures.</strong> Deliveries wait until ${when(endpoint.circuit_open_until)}, then one is tried; they keep their places and their tries meanwhile.</div>`}
    <section class="panel" aria-labelledby="overview-heading">
      <h2 id="overview-heading">Overview</h2>
      <dl class="facts">
        <div><dt>Status</dt><dd>${status(endpoint, false)}</dd></div>
        <div><dt>Success, last 24 h</dt><dd>${successRate(endpoint.health)}</dd></div>
        <div><dt>Added</dt><dd>${when(endpoint.created_at)}</dd></div>
        <div><dt>Throttle</dt><dd>${describedThrottle(endpoint.throttle_per_second)}</dd></div>
        <div${endpoint.health.last_error === null ? "" : html` class="wide"`}><dt>Last attempt</dt><dd>${lastAttempt(endpoint.health)}</dd></div>
      </dl>
      <dl class="facts">
        <div class="wide"><dt>Event types</dt><dd>${eventTypes(endpoint.event_types)}</dd></div>
      </dl>
    </section>
    ${secretPanel(signedIn, endpoint, state.secret)}
    ${testPanel(signedIn, endpoint, state.testForm)}
    ${throttlePanel(signedIn, endpoint, state.throttleForm)}
    ${togglePanel(signedIn, endpoint)}
    ${deletePanel(endpoint)}`);

/**
 * The confirmation before a deletion: what goes (new deliveries, queued ones, the signing secret)
 * and what stays (the delivery history, until retention); the slot under the limit is freed.
 */
export const confirmDeletePage = (signedIn: SignedIn, endpoint: WebhookEndpointOverview, error?: string): string =>
  signedInPage(signedIn, "webhooks", "Delete endpoint", html`
    <div class="page-header">
      <p class="breadcrumb"><a href="/webhooks/${endpoint.id}">${endpoint.url}</a></p>
      <h1>Delete this endpoint?</h1>
    </div>
    ${error === undefined ? "" : html`<div class="callout callout-danger" role="alert">${error}</div>`}
    <section class="panel">
      <p><strong class="url-inline">${endpoint.url}</strong></p>
      <ul class="consequences">
        <li>Nothing more is sent to it: new events are not queued for it, and deliveries still queued end as <strong>endpoint deleted</strong>.</li>
        <li>Its signing secret is destroyed, and it cannot be enabled, edited or sent test events again.</li>
        <li>Its deliveries stay in the delivery log, shown as a deleted endpoint, until retention removes them.</li>
        <li>It no longer counts towards your organization's limit on endpoints.</li>
      </ul>
      <form method="post" action="/webhooks/${endpoint.id}/delete" class="form-actions">
        ${formTokenField(signedIn.formToken)}
        <button type="submit" class="button button-danger">Delete endpoint</button>
        <a class="button" href="/webhooks/${endpoint.id}">Cancel</a>
      </form>
    </section>`);

const duration = (ms: number) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);

const overlapText = (ms: number) =>
  ms % 3_600_000 === 0 ? `${ms / 3_600_000} ${ms === 3_600_000 ? "hour" : "hours"}` : `${Math.round(ms / 60_000)} minutes`;

/** The confirmation before a rotation: what changes now, and how long the current secret keeps signing. */
export const confirmRotatePage = (signedIn: SignedIn, endpoint: WebhookEndpointOverview, overlapMs: number): string =>
  signedInPage(signedIn, "webhooks", "Rotate signing secret", html`
    <div class="page-header">
      <p class="breadcrumb"><a href="/webhooks/${endpoint.id}">${endpoint.url}</a></p>
      <h1>Rotate the signing secret?</h1>
    </div>
    <section class="panel">
      <p>A new secret is made and shown to you. Deliveries from now on are signed with it${overlapMs === 0
        ? html` only: <strong>the current secret stops signing at once</strong>.`
        : html`, and with the current secret beside it for <strong>${overlapText(overlapMs)}</strong>, so your receiver keeps verifying while you switch it to the new one.`}</p>
      <form method="post" action="/webhooks/${endpoint.id}/rotate" class="form-actions">
        ${formTokenField(signedIn.formToken)}
        <button type="submit" class="button button-danger">Rotate secret</button>
        <a class="button" href="/webhooks/${endpoint.id}">Cancel</a>
      </form>
    </section>`);

const DELIVERY_STATUS: Record<EndpointDelivery["status"], HtmlValue> = {
  pending: html`<span class="badge badge-paused">Pending</span>`,
  succeeded: html`<span class="badge badge-active">Delivered</span>`,
  failed: html`<span class="badge badge-failed">Failed</span>`,
};

const attemptRow = (attempt: EndpointDelivery["attempts"][number]) => html`<tr>
        <td>${attempt.attempt}</td>
        <td>${when(attempt.started_at)}</td>
        <td>${answer(attempt.status_code)}</td>
        <td>${duration(attempt.duration_ms)}</td>
        <td class="response">${attempt.error === null ? "" : html`<p class="attempt-error">${attempt.error}</p>`}${
          attempt.response_body === null || attempt.response_body === "" ? html`<span class="muted">Empty body</span>` : html`${
            responseBodyCut(attempt.response_body) ? html`<p class="hint">First 1 KiB of the body: the rest was not kept.</p>` : ""}<pre class="body-excerpt">${attempt.response_body}</pre>`}</td>
      </tr>`;

const formatted = (body: string | undefined) => {
  if (body === undefined) return "(this message can no longer be read)";
  return JSON.stringify(JSON.parse(body), null, 2);
};

/** How often the test delivery's page reloads itself while its first attempt has not been made. */
export const TEST_DELIVERY_REFRESH_SECONDS = 2;

/**
 * A test event's delivery: its status and every attempt (status code, duration, error, the start
 * of the response). Until the first attempt is made the page reloads itself every 2 seconds.
 */
export const testDeliveryPage = (signedIn: SignedIn, endpoint: WebhookEndpointOverview, delivery: EndpointDelivery): string => {
  const waiting = delivery.status === "pending" && delivery.attempts.length === 0;
  return signedInPage(signedIn, "webhooks", "Test event", html`
    <div class="page-header">
      <p class="breadcrumb"><a href="/webhooks/${endpoint.id}">${endpoint.url}</a></p>
      <h1>Test event <code class="heading-code">${delivery.event_type}</code></h1>
    </div>
    <section class="panel" aria-labelledby="delivery-heading">
      <h2 id="delivery-heading">Delivery ${DELIVERY_STATUS[delivery.status]}</h2>
      <dl class="facts">
        <div><dt>Message id</dt><dd><code>${delivery.envelope_id}</code></dd></div>
        <div><dt>Sent to</dt><dd class="wrap">${endpoint.url}</dd></div>
        <div><dt>Queued</dt><dd>${when(delivery.created_at)}</dd></div>
        <div><dt>Next try</dt><dd>${waiting ? "Now" : delivery.next_attempt_at === null ? html`<span class="muted">None</span>` : when(delivery.next_attempt_at)}</dd></div>
      </dl>
      ${waiting
        ? html`<p class="waiting" role="status">Waiting for the first attempt… This page refreshes by itself every ${TEST_DELIVERY_REFRESH_SECONDS} seconds.</p>`
        : html`<div class="table-scroll"><table class="attempts">
        <thead><tr><th scope="col">Try</th><th scope="col">Started</th><th scope="col">Answer</th><th scope="col">Duration</th><th scope="col">Error and response</th></tr></thead>
        <tbody>
      ${delivery.attempts.map(attemptRow)}
        </tbody>
      </table></div>`}
      <div class="form-actions">
        <a class="button" href="/webhooks/${endpoint.id}/test/${delivery.id}">Check again</a>
        <a class="button button-quiet" href="/webhooks/${endpoint.id}">Back to the endpoint</a>
      </div>
    </section>
    <section class="panel" aria-labelledby="payload-heading">
      <h2 id="payload-heading">Payload</h2>
      <p class="hint">The message as sent (formatted here; the body is compact JSON). Its type's example from the event catalog.</p>
      <pre class="payload"><code>${formatted(delivery.body)}</code></pre>
    </section>`, waiting ? { refreshSeconds: TEST_DELIVERY_REFRESH_SECONDS } : {});
};
