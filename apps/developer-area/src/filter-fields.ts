import { html, type HtmlValue } from "./html.ts";

/** Parts the list pages' filter forms share (Deliveries, Request log, Audit log). */

/** A time as a `datetime-local` field shows it (UTC): to the minute, or to the millisecond when it has them. */
export const localTime = (iso: string | undefined): string =>
  iso === undefined ? "" : iso.endsWith(":00.000Z") ? iso.slice(0, 16) : iso.slice(0, 23);

/**
 * `?name=value&…` of the fields that are set (`from` and `to` as the time fields show them), for
 * links that keep a filter; "" when none is.
 */
export const queryString = (fields: Readonly<Record<string, string | number | undefined>>): string => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined) params.set(name, name === "from" || name === "to" ? localTime(String(value)) : String(value));
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
};

/** The "From" and "To" fields of a filter by time (UTC), holding `from` and `to` as entered or as read. */
export const utcTimeRangeFields = (from: string, to: string): HtmlValue => html`<div class="field">
        <label for="filter-from">From <span class="hint-inline">(UTC)</span></label>
        <input id="filter-from" name="from" type="datetime-local" step="1" value="${from}">
      </div>
      <div class="field">
        <label for="filter-to">To <span class="hint-inline">(UTC)</span></label>
        <input id="filter-to" name="to" type="datetime-local" step="1" value="${to}">
      </div>`;

/** A filter form's Apply and Clear (back to `path` unfiltered), and the error under the form when its input could not be read. */
export const filterFormEnd = (path: string, error: string | undefined): HtmlValue => html`<div class="filter-actions">
        <button type="submit" class="button button-primary">Apply</button>
        <a class="button button-quiet" href="${path}">Clear</a>
      </div>
    </form>
    ${error === undefined ? "" : html`<p class="field-error" role="alert">${error}</p>`}`;
