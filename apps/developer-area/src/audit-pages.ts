import { AUDIT_ACTOR_KINDS, type AuditActorKind, type AuditLogFilter, type ListPage } from "@platter/domain";
import type { AuditEntry } from "@platter/persistence";
import { filterFormEnd } from "./filter-fields.ts";
import { html, type HtmlValue } from "./html.ts";
import { type SignedIn, signedInPage } from "./layout.ts";
import { when } from "./pages.ts";
import { deviceLabel } from "./sessions-pages.ts";

/**
 * The Audit log page: who changed the organization's keys, endpoints, deliveries and sessions, what,
 * and when; newest first, filtered by action, kind of actor and days, page by page. Every value
 * (an operator's name, a subject) is shown as text.
 */

const ACTOR_LABEL: Readonly<Record<AuditActorKind, string>> = {
  session: "Developer-area sessions", operator: "The operator (CLI)", api_key: "API keys (platter listen, platter trigger)",
};

/** `2026-11-25T00:00:00.000Z` → `2026-11-25`; a filter's `to` (the next day's start) → the day it includes. */
const dayOf = (iso: string | undefined, included = false) =>
  iso === undefined ? "" : new Date(Date.parse(iso) - (included ? 86_400_000 : 0)).toISOString().slice(0, 10);

/** The query string of `filter` (and `extra`), for links that keep it. */
export const auditFilterQuery = (filter: AuditLogFilter, extra: Readonly<Record<string, string>> = {}): string => {
  const params = new URLSearchParams();
  if (filter.action !== undefined) params.set("action", filter.action);
  if (filter.actor !== undefined) params.set("actor", filter.actor);
  if (filter.from !== undefined) params.set("from", dayOf(filter.from));
  if (filter.to !== undefined) params.set("to", dayOf(filter.to, true));
  for (const [name, value] of Object.entries(extra)) params.set(name, value);
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
};

/** What the page shows besides the page of entries. */
export interface AuditPageState {
  readonly filter: AuditLogFilter;
  /** The filter as entered, when it could not be read (the page then shows the form and why, and no entries). */
  readonly entered?: Readonly<Record<string, string>>;
  readonly error?: string;
  /** The actions the log holds: the action filter's choices. */
  readonly actions: ReadonlyArray<string>;
  /** Whether this page follows another (a cursor was given). */
  readonly deeper: boolean;
}

/** Who did it: the session's device, the operator's name, or the key's name and prefix. */
const who = (entry: AuditEntry): HtmlValue => {
  if (entry.operator !== null) return html`<span class="badge badge-write">Operator</span> <span>${entry.operator}</span>`;
  if (entry.api_key !== null) {
    return html`<span class="badge badge-read">API key</span> <span>${entry.api_key.name === "" ? "" : `${entry.api_key.name} `}<code>${entry.api_key.prefix}…</code></span>`;
  }
  return html`<span class="badge badge-read">Session</span> <span>${deviceLabel(entry.device_hint)}</span>`;
};

/** A value of an entry's details as text: none, a list of event types (none: every type), or the value itself. */
const detailValue = (field: string, value: unknown): string => {
  if (value === null || value === undefined || value === "") return "none";
  if (Array.isArray(value)) return value.length === 0 && field === "event_types" ? "every type" : value.join(", ");
  return String(value);
};

/** What a change changed (`AuditEntry.details`): each field before → after, every value shown as text. */
const changes = (entry: AuditEntry): HtmlValue =>
  entry.details === null
    ? ""
    : html`<dl class="audit-details">${Object.keys(entry.details.after).sort().map((field) => html`
        <div><dt>${field.replaceAll("_", " ")}</dt><dd><span class="before">${detailValue(field, entry.details?.before[field])}</span> → <span class="after">${detailValue(field, entry.details?.after[field])}</span></dd></div>`)}
      </dl>`;

const entryRow = (entry: AuditEntry) => html`<tr>
      <td>${when(entry.at)}</td>
      <td class="who">${who(entry)}</td>
      <td><code>${entry.action}</code></td>
      <td>${entry.subject}${changes(entry)}</td>
    </tr>`;

const option = (value: string, label: string, chosen: string) => html`<option value="${value}"${value === chosen ? html` selected` : ""}>${label}</option>`;

const filterForm = (state: AuditPageState) => {
  const value = (name: string, fromFilter: string | undefined) => state.entered?.[name] ?? fromFilter ?? "";
  const action = value("action", state.filter.action);
  const actions = state.actions.includes(action) || action === "" ? state.actions : [...state.actions, action];
  return html`<form class="filters" method="get" action="/audit-log" aria-label="Filter the audit log">
      <div class="field">
        <label for="filter-action">Action</label>
        <select id="filter-action" name="action">
          <option value="">Any action</option>
          ${actions.map((name) => option(name, name, action))}
        </select>
      </div>
      <div class="field">
        <label for="filter-actor">Who</label>
        <select id="filter-actor" name="actor">
          <option value="">Anyone</option>
          ${AUDIT_ACTOR_KINDS.map((kind) => option(kind, ACTOR_LABEL[kind], value("actor", state.filter.actor)))}
        </select>
      </div>
      <div class="field">
        <label for="filter-from">From <span class="hint-inline">(UTC)</span></label>
        <input id="filter-from" name="from" type="date" value="${value("from", dayOf(state.filter.from))}">
      </div>
      <div class="field">
        <label for="filter-to">To <span class="hint-inline">(UTC, included)</span></label>
        <input id="filter-to" name="to" type="date" value="${value("to", dayOf(state.filter.to, true))}">
      </div>
      ${filterFormEnd("/audit-log", state.error)}`;
};

/** The audit log: the filter form, one page of entries, and the link to older ones. */
export const auditLogPage = (signedIn: SignedIn, state: AuditPageState, log: ListPage<AuditEntry> | undefined): string =>
  signedInPage(signedIn, "audit-log", "Audit log", html`
    <div class="page-header">
      <h1>Audit log</h1>
      <p class="lede">Every change to your organization's API keys, webhook endpoints, deliveries and sessions, newest first: made in a
        Developer-area session (shown by its device), by the operator, or with an API key (<code>platter trigger</code>, <code>platter listen</code>).</p>
    </div>
    <section class="panel panel-filters">${filterForm(state)}</section>
    <section class="panel" aria-labelledby="audit-heading">
      <h2 id="audit-heading" class="visually-hidden">Entries</h2>
      ${log === undefined
        ? html`<p class="empty">Correct the filter above to see the log.</p>`
        : log.data.length === 0
          ? html`<p class="empty">${state.deeper ? "No older entries." : "No entries match."}</p>`
          : html`<div class="table-scroll"><table class="log audit">
        <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Subject</th></tr></thead>
        <tbody>
    ${log.data.map(entryRow)}
        </tbody>
      </table></div>`}
      <nav class="pager" aria-label="Pages">
        ${state.deeper ? html`<a class="button" href="/audit-log${auditFilterQuery(state.filter)}">Newest</a>` : ""}
        ${log?.next_cursor ? html`<a class="button" rel="next" href="/audit-log${auditFilterQuery(state.filter, { cursor: log.next_cursor })}">Older →</a>` : ""}
      </nav>
    </section>`);
