import {
  DELIVERY_STATUSES, type DeliveryLogFilter, type DeliveryStatus, envelopeBody, type ListPage, WEBHOOK_EVENT_TYPES,
} from "@platter/domain";
import type { AttemptView, DeliveryLogEntry, MessageView, WebhookEndpointView } from "@platter/persistence";
import { RESPONSE_BODY_BYTES } from "@platter/webhooks";
import { filterFormEnd, localTime, queryString, utcTimeRangeFields } from "./filter-fields.ts";
import { html, type HtmlValue } from "./html.ts";
import { formTokenField, type SignedIn, signedInPage } from "./layout.ts";
import { when } from "./pages.ts";

/**
 * The Deliveries pages: the message log (every delivery of a message to an endpoint, newest first,
 * filtered, page by page) and a message with every attempt of each of its deliveries, with the
 * replays. A receiver's response body and error are shown as text, like every other value.
 */

const STATUS_LABEL: Readonly<Record<DeliveryStatus, string>> = { pending: "Pending", succeeded: "Succeeded", failed: "Failed" };

const statusBadge = (status: DeliveryStatus) => html`<span class="badge badge-${status}">${STATUS_LABEL[status]}</span>`;

/** The query string of `filter` (and `extra`), for links that keep it. */
export const filterQuery = (filter: DeliveryLogFilter, extra: Readonly<Record<string, string>> = {}): string =>
  queryString({ status: filter.status, type: filter.eventType, endpoint: filter.endpointId, from: filter.from, to: filter.to, ...extra });

/** The path of a message's page. */
export const messagePath = (envelopeId: string): string => `/deliveries/${envelopeId}`;

/**
 * The last attempt in a few words: `HTTP 500`, `ECONNREFUSED: connect …` (one line, cut with an
 * ellipsis; the whole error in its title and on the message's page), or nothing yet.
 */
const lastOutcome = (entry: DeliveryLogEntry): HtmlValue => {
  const tries = html`<span class="muted">${entry.attempts} ${entry.attempts === 1 ? "attempt" : "attempts"}</span>`;
  // Ended without its attempts deciding it (its endpoint was disabled or deleted): the reason, whole (it is short), then the tries made.
  if (entry.settled_reason !== null) return html`<span class="outcome outcome-settled" title="${entry.settled_reason}">Ended: ${entry.settled_reason}</span>${tries}`;
  if (entry.attempts === 0 || entry.last_attempt_at === null) return html`<span class="muted">Not tried yet</span>`;
  const outcome = entry.last_status_code === null ? entry.last_error ?? "No answer" : `HTTP ${entry.last_status_code}`;
  return html`<span class="outcome" title="${outcome}">${outcome}</span>${tries}`;
};

/**
 * An endpoint's URL in the log, all of it: its origin (scheme, host, port), then its path on a
 * line of its own when both do not fit, so endpoints on one host differ where the eye looks.
 * The text stays the URL as entered (copied, it is one line).
 */
const endpointUrl = (url: string): HtmlValue => {
  const pathStart = url.indexOf("/", url.indexOf("://") + 3);
  return pathStart === -1
    ? html`<span class="url-origin">${url}</span>`
    : html`<span class="url-origin">${url.slice(0, pathStart)}</span><wbr><span class="url-path">${url.slice(pathStart)}</span>`;
};

const selectOptions = <T extends string>(values: ReadonlyArray<T>, chosen: string | undefined, label: (value: T) => string) =>
  values.map((value) => html`<option value="${value}"${value === chosen ? html` selected` : ""}>${label(value)}</option>`);

/** What the log page shows besides the page of deliveries. */
export interface LogPageState {
  readonly filter: DeliveryLogFilter;
  /** The filter as entered, when it could not be read (the page then shows nothing but the form and why). */
  readonly entered?: Readonly<Record<string, string>>;
  readonly error?: string;
  readonly endpoints: ReadonlyArray<WebhookEndpointView>;
  /** Whether this page follows another (a cursor was given). */
  readonly deeper: boolean;
  readonly notice?: string;
}

const endpointLabel = (endpoint: Pick<WebhookEndpointView, "id" | "url">) => `#${endpoint.id} ${endpoint.url}`;

const filterForm = (state: LogPageState) => {
  const value = (name: string, fromFilter: string | undefined) => state.entered?.[name] ?? fromFilter ?? "";
  return html`<form class="filters" method="get" action="/deliveries" aria-label="Filter deliveries">
      <div class="field">
        <label for="filter-status">Status</label>
        <select id="filter-status" name="status">
          <option value="">Any status</option>
          ${selectOptions(DELIVERY_STATUSES, value("status", state.filter.status), (status) => STATUS_LABEL[status])}
        </select>
      </div>
      <div class="field">
        <label for="filter-type">Event type</label>
        <select id="filter-type" name="type">
          <option value="">Any event type</option>
          ${selectOptions(WEBHOOK_EVENT_TYPES, value("type", state.filter.eventType), (type) => type)}
        </select>
      </div>
      <div class="field">
        <label for="filter-endpoint">Endpoint</label>
        <select id="filter-endpoint" name="endpoint">
          <option value="">All endpoints</option>
          ${selectOptions(state.endpoints.map((endpoint) => String(endpoint.id)), value("endpoint", state.filter.endpointId?.toString()), (id) =>
            endpointLabel(state.endpoints.find((endpoint) => String(endpoint.id) === id)!))}
        </select>
      </div>
      ${utcTimeRangeFields(value("from", localTime(state.filter.from)), value("to", localTime(state.filter.to)))}
      ${filterFormEnd("/deliveries", state.error)}`;
};

const logRow = (entry: DeliveryLogEntry) => html`<tr>
      <td><div class="message"><a class="mono" href="${messagePath(entry.envelope_id)}">${entry.envelope_id}</a> <code>${entry.event_type}</code></div></td>
      <td class="url">${entry.endpoint_deleted
        ? html`<span class="deleted-endpoint">${endpointUrl(entry.endpoint_url)}</span> <span class="badge badge-revoked">Deleted endpoint</span>`
        : html`<a href="/deliveries${filterQuery({ endpointId: entry.endpoint_id })}">${endpointUrl(entry.endpoint_url)}</a>`}</td>
      <td>${statusBadge(entry.status)}</td>
      <td><div class="last">${lastOutcome(entry)}</div></td>
      <td>${when(entry.created_at)}</td>
    </tr>`;

/** The "replay every failed message since" form of an endpoint's log. */
const replayFailedForm = (signedIn: SignedIn, endpoint: WebhookEndpointView) => html`<section class="panel" aria-labelledby="replay-failed-heading">
      <h2 id="replay-failed-heading">Replay failed messages</h2>
      <p class="hint">Sends every failed message of <strong>${endpoint.url}</strong> made since the time you choose again, and tries
        those still waiting to retry now: with the same envelope id and the same bytes, so your receiver can deduplicate them.</p>
      <form class="inline-form" method="post" action="/deliveries/replay-failed">
        ${formTokenField(signedIn.formToken)}
        <input type="hidden" name="endpoint" value="${endpoint.id}">
        <div class="field">
          <label for="replay-since">Failed since <span class="hint-inline">(UTC)</span></label>
          <input id="replay-since" name="since" type="datetime-local" step="1" required>
        </div>
        <button type="submit" class="button button-primary">Replay failed messages</button>
      </form>
    </section>`;

/** The message log: the filter form, one page of deliveries, and the link to the next. */
export const deliveriesPage = (signedIn: SignedIn, state: LogPageState, log: ListPage<DeliveryLogEntry> | undefined): string => {
  const endpoint = state.endpoints.find((candidate) => candidate.id === state.filter.endpointId);
  return signedInPage(signedIn, "deliveries", "Deliveries", html`
    <div class="page-header">
      ${endpoint === undefined ? "" : html`<p class="breadcrumb"><a href="/deliveries">All deliveries</a></p>`}
      <h1>${endpoint === undefined ? "Deliveries" : "Deliveries to one endpoint"}</h1>
      <p class="lede">${endpoint === undefined
        ? "Every message sent to your endpoints, newest first. Open one to see each attempt and what your endpoint answered, and to send it again."
        : html`Every message sent to <strong class="url-inline">${endpoint.url}</strong>, newest first.`}</p>
    </div>
    ${state.notice === undefined ? "" : html`<div class="notice" role="status">${state.notice}</div>`}
    <section class="panel panel-filters">${filterForm(state)}</section>
    ${endpoint === undefined ? "" : replayFailedForm(signedIn, endpoint)}
    <section class="panel" aria-labelledby="log-heading">
      <h2 id="log-heading" class="visually-hidden">Messages</h2>
      ${log === undefined
        ? html`<p class="empty">Correct the filter above to see deliveries.</p>`
        : log.data.length === 0
          ? html`<p class="empty">${state.deeper ? "No more deliveries." : "No deliveries match."} Messages appear here once something happens that your endpoints subscribe to.</p>`
          : html`<div class="table-scroll"><table class="log">
        <thead><tr><th scope="col">Message</th><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col">Last attempt</th><th scope="col">Created</th></tr></thead>
        <tbody>
    ${log.data.map(logRow)}
        </tbody>
      </table></div>`}
      <nav class="pager" aria-label="Pages">
        ${state.deeper ? html`<a class="button" href="/deliveries${filterQuery(state.filter)}">Newest</a>` : ""}
        ${log?.next_cursor ? html`<a class="button" rel="next" href="/deliveries${filterQuery(state.filter, { cursor: log.next_cursor })}">Older →</a>` : ""}
      </nav>
    </section>`);
};

/**
 * Whether a stored response body is the dispatcher's cut: it keeps the first `RESPONSE_BODY_BYTES`
 * bytes, read as UTF-8 (a character cut in two becomes one U+FFFD, so a cut body is a few bytes
 * either side of the limit).
 */
export const responseBodyCut = (body: string): boolean => Buffer.byteLength(body, "utf8") >= RESPONSE_BODY_BYTES - 2;

/** An attempt's outcome: the status code, or the error when there was no answer. */
const attemptRow = (attempt: AttemptView) => html`<tr>
          <td>${attempt.attempt}</td>
          <td>${when(attempt.started_at)}</td>
          <td>${attempt.duration_ms} ms</td>
          <td>${attempt.status_code === null
            ? html`<span class="muted">No answer</span>`
            : html`<span class="status-code ${attempt.status_code >= 200 && attempt.status_code < 300 ? "status-ok" : "status-bad"}">${attempt.status_code}</span>`}</td>
          <td class="attempt-detail">
            ${attempt.error === null ? "" : html`<span class="attempt-error">${attempt.error}</span>`}
            ${attempt.response_body === null || attempt.response_body === ""
              ? html`<span class="muted">${attempt.error === null ? "Empty response body" : ""}</span>`
              : html`<details><summary>Response body${responseBodyCut(attempt.response_body) ? html` <span class="hint-inline">(first 1 KiB: the rest was not kept)</span>` : ""}</summary><pre class="body-excerpt response-body">${attempt.response_body}</pre></details>`}
          </td>
        </tr>`;

type MessageDelivery = MessageView["deliveries"][number];

const deliveryPanel = (signedIn: SignedIn, message: MessageView, delivery: MessageDelivery) => html`<section class="panel delivery" aria-labelledby="delivery-${delivery.id}">
      <div class="delivery-head">
        <h2 id="delivery-${delivery.id}"><span class="url-inline">${delivery.endpoint_url}</span></h2>
        ${statusBadge(delivery.status)}${delivery.endpoint_deleted ? html` <span class="badge badge-revoked">Deleted endpoint</span>` : ""}
      </div>
      <p class="hint">${delivery.endpoint_deleted ? "Its endpoint was deleted: nothing more is sent to it." : delivery.status === "pending"
        ? delivery.replayable ? html`Next attempt ${when(delivery.next_attempt_at)}` : "Being sent now."
        : delivery.status === "succeeded" ? "Delivered." : "Out of tries: nothing more is sent unless you replay it."}</p>
      ${delivery.attempts.length === 0
        ? html`<p class="empty">No attempt yet.</p>`
        : html`<div class="table-scroll"><table class="attempts">
        <thead><tr><th scope="col">#</th><th scope="col">Started</th><th scope="col">Duration</th><th scope="col">Status</th><th scope="col">Error and response</th></tr></thead>
        <tbody>
        ${delivery.attempts.map(attemptRow)}
        </tbody>
      </table></div>`}
      ${!delivery.replayable ? "" : html`<form method="post" action="${messagePath(message.envelope_id)}/replay" class="form-actions">
        ${formTokenField(signedIn.formToken)}
        <input type="hidden" name="delivery" value="${delivery.id}">
        ${delivery.status === "pending"
          ? html`<button type="submit" class="button">Retry now<span class="visually-hidden"> to ${delivery.endpoint_url}</span></button>
        <span class="hint">Tries it at once instead of waiting; the retry schedule carries on from there.</span>`
          : html`<button type="submit" class="button">Replay to this endpoint<span class="visually-hidden"> ${delivery.endpoint_url}</span></button>`}
      </form>`}
    </section>`;

/** A message: its envelope as sent, and each delivery with every attempt; replay to one endpoint or all. */
export const messagePage = (signedIn: SignedIn, message: MessageView, notice?: string): string => {
  const body = envelopeBody({ envelopeId: message.envelope_id, type: message.event_type, createdAt: message.created_at, payload: message.payload });
  const replayable = message.deliveries.filter((delivery) => delivery.replayable).length;
  return signedInPage(signedIn, "deliveries", `Message ${message.envelope_id}`, html`
    <div class="page-header">
      <p class="breadcrumb"><a href="/deliveries">Deliveries</a></p>
      <h1>Message <span class="mono">${message.envelope_id}</span></h1>
    </div>
    ${notice === undefined ? "" : html`<div class="notice" role="status">${notice}</div>`}
    <section class="panel" aria-labelledby="envelope-heading">
      <dl class="facts">
        <div><dt>Event type</dt><dd><code>${message.event_type}</code></dd></div>
        <div><dt>Created</dt><dd>${when(message.created_at)}</dd></div>
        <div><dt>Endpoints</dt><dd>${message.deliveries.length}</dd></div>
      </dl>
      <h2 id="envelope-heading">Payload</h2>
      ${body === undefined
        ? html`<p class="empty">This message's payload cannot be shown by this version of Platter.</p>`
        : html`<pre class="payload">${JSON.stringify(JSON.parse(body), null, 2)}</pre>`}
      ${replayable === 0 ? "" : html`<form method="post" action="${messagePath(message.envelope_id)}/replay" class="form-actions">
        ${formTokenField(signedIn.formToken)}
        <button type="submit" class="button button-primary">Replay to all its endpoints</button>
        <span class="hint">Sends it now to each endpoint not already being sent it, with the same envelope id and bytes.</span>
      </form>`}
    </section>
    ${message.deliveries.length === 0
      ? html`<section class="panel"><p class="empty">No endpoint was subscribed to this event type when it happened.</p></section>`
      : message.deliveries.map((delivery) => deliveryPanel(signedIn, message, delivery))}`);
};
