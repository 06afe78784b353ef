import { type ListPage, REQUEST_LOG_ROUTES, type RequestLogEntry, type RequestLogFilter, STATUS_CLASSES } from "@platter/domain";
import type { ApiKeyView } from "@platter/persistence";
import { filterFormEnd, localTime, queryString, utcTimeRangeFields } from "./filter-fields.ts";
import { html } from "./html.ts";
import { type SignedIn, signedInPage } from "./layout.ts";
import { when } from "./pages.ts";

/**
 * The Request log page: the organization's own API requests (every failure, a sample of the
 * successes), newest first, filtered by key, status class, route, time or request id, page by page.
 */

/** What the page shows besides the page of requests. */
export interface RequestLogPageState {
  readonly filter: RequestLogFilter;
  /** The filter as entered, when it could not be read. */
  readonly entered?: Readonly<Record<string, string>>;
  readonly error?: string;
  readonly keys: ReadonlyArray<ApiKeyView>;
  /** Whether this is a page after the first. */
  readonly deeper: boolean;
  /** Share of successful requests kept, in percent. */
  readonly successPercent: number;
  /** How long requests are kept, in days. */
  readonly retentionDays: number;
}

/** The query string of `filter` (and `extra`), for links that keep it. */
const filterQuery = (filter: RequestLogFilter, extra: Readonly<Record<string, string>> = {}): string =>
  queryString({
    key: filter.keyId, status: filter.statusClass, route: filter.route, request: filter.requestId, from: filter.from, to: filter.to, ...extra,
  });

const option = (value: string, label: string, chosen: string) => html`<option value="${value}"${value === chosen ? html` selected` : ""}>${label}</option>`;

const keyLabel = (key: ApiKeyView) => `${key.name || `Key ${key.id}`} (${key.prefix}…)`;

const filterForm = (state: RequestLogPageState) => {
  const value = (name: string, fromFilter: string | undefined) => state.entered?.[name] ?? fromFilter ?? "";
  return html`<form class="filters" method="get" action="/requests" aria-label="Filter requests">
      <div class="field">
        <label for="filter-request">Request id</label>
        <input id="filter-request" name="request" type="search" spellcheck="false" autocomplete="off" placeholder="req_…" value="${value("request", state.filter.requestId)}">
      </div>
      <div class="field">
        <label for="filter-key">Key</label>
        <select id="filter-key" name="key">
          <option value="">Any key</option>
          ${state.keys.map((key) => option(String(key.id), keyLabel(key), value("key", state.filter.keyId?.toString())))}
        </select>
      </div>
      <div class="field">
        <label for="filter-status">Status</label>
        <select id="filter-status" name="status">
          <option value="">Any status</option>
          ${STATUS_CLASSES.map((status) => option(status, status, value("status", state.filter.statusClass)))}
        </select>
      </div>
      <div class="field">
        <label for="filter-route">Route</label>
        <select id="filter-route" name="route">
          <option value="">Any route</option>
          ${REQUEST_LOG_ROUTES.map((route) => option(route, route, value("route", state.filter.route)))}
        </select>
      </div>
      ${utcTimeRangeFields(value("from", localTime(state.filter.from)), value("to", localTime(state.filter.to)))}
      ${filterFormEnd("/requests", state.error)}`;
};

const row = (entry: RequestLogEntry, keys: ReadonlyArray<ApiKeyView>) => {
  const key = keys.find((candidate) => candidate.id === entry.api_key_id);
  return html`<tr>
      <td>${when(entry.at)}</td>
      <td><code>${entry.method} ${entry.route}</code></td>
      <td><span class="status-code ${entry.status < 400 ? "status-ok" : "status-bad"}">${entry.status}</span></td>
      <td>${entry.duration_ms} ms</td>
      <td>${key === undefined ? `Key ${entry.api_key_id}` : keyLabel(key)}</td>
      <td><a class="mono" href="/requests${filterQuery({ requestId: entry.request_id })}">${entry.request_id}</a></td>
      <td class="error-text">${entry.error ?? ""}</td>
    </tr>`;
};

/** The Request log page. */
export const requestLogPage = (signedIn: SignedIn, state: RequestLogPageState, log: ListPage<RequestLogEntry> | undefined): string =>
  signedInPage(signedIn, "requests", "Request log", html`
    <div class="page-header">
      <h1>Request log</h1>
      <p class="lede">Your integration's requests to the Platter API, newest first: every one that failed (4xx and 5xx) and
        ${state.successPercent === 100 ? "every success" : `${state.successPercent} % of the successes`}, kept for ${state.retentionDays} days.
        Paste a request id from an error (<code>x-request-id</code>, or the SDK error's <code>requestId</code>) to find its request.
        Bodies and keys are never recorded.</p>
    </div>
    <section class="panel panel-filters">${filterForm(state)}</section>
    <section class="panel" aria-labelledby="requests-heading">
      <h2 id="requests-heading" class="visually-hidden">Requests</h2>
      ${log === undefined
        ? html`<p class="empty">Correct the filter above to see requests.</p>`
        : log.data.length === 0
          ? html`<p class="empty">${state.deeper ? "No more requests." : "No requests match."} Requests appear here within a few seconds.</p>`
          : html`<div class="table-scroll"><table class="log requests">
        <thead><tr><th scope="col">Time</th><th scope="col">Request</th><th scope="col">Status</th><th scope="col">Duration</th><th scope="col">Key</th><th scope="col">Request id</th><th scope="col">Error</th></tr></thead>
        <tbody>
    ${log.data.map((entry) => row(entry, state.keys))}
        </tbody>
      </table></div>`}
      <nav class="pager" aria-label="Pages">
        ${state.deeper ? html`<a class="button" href="/requests${filterQuery(state.filter)}">Newest</a>` : ""}
        ${log?.next_cursor ? html`<a class="button" rel="next" href="/requests${filterQuery(state.filter, { cursor: log.next_cursor })}">Older →</a>` : ""}
      </nav>
    </section>`);
