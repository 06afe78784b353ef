import type { EndpointNoticeView } from "@platter/persistence";
import { html, type HtmlValue } from "./html.ts";
import { when } from "./pages.ts";

/**
 * The banners of endpoints' active operational notices (failing, about to be disabled, disabled),
 * at the top of the Webhooks pages: the same notices the operator's webhook carries. Every text in
 * them (the URL, the reason) is escaped by `html`.
 */

const sentence = (reason: string) => `${reason.charAt(0).toUpperCase()}${reason.slice(1)}${reason.endsWith(".") ? "" : "."}`;

/** One notice's banner; `withUrl` names the endpoint (on the list, where several may show). */
const banner = (notice: EndpointNoticeView, withUrl: boolean): HtmlValue => {
  const which = withUrl ? html` <a class="endpoint-url" href="/webhooks/${notice.endpoint_id}">${notice.endpoint_url}</a> —` : "";
  return notice.kind === "failing"
    ? html`<div class="callout callout-warning endpoint-notice" role="alert" data-notice="failing"><strong>Failing:</strong>${which} ${sentence(notice.reason)} Deliveries wait and are retried; nothing is lost yet. Since ${when(notice.at)}.</div>`
    : notice.kind === "disabling_soon"
      ? html`<div class="callout callout-danger endpoint-notice" role="alert" data-notice="disabling_soon"><strong>About to be disabled at ${when(notice.disables_at)}:</strong>${which} every delivery has failed for most of its failure window. One successful delivery keeps it enabled.</div>`
      : html`<div class="callout callout-danger endpoint-notice" role="alert" data-notice="disabled"><strong>Disabled at ${when(notice.at)}:</strong>${which} because ${notice.reason}. Nothing is sent to it until it is enabled again.</div>`;
};

/** Banners for every endpoint with an active notice (the Webhooks list). */
export const noticeBanners = (notices: ReadonlyArray<EndpointNoticeView>): HtmlValue =>
  html`${notices.map((notice) => banner(notice, true))}`;

/** The banner of one endpoint's active notice, if it has one (its own page). */
export const endpointNoticeBanner = (notices: ReadonlyArray<EndpointNoticeView>, endpointId: number): HtmlValue => {
  const notice = notices.find((n) => n.endpoint_id === endpointId);
  return notice === undefined ? "" : banner(notice, false);
};
