import { type Html, html, type HtmlValue } from "./html.ts";

/**
 * The page shells: the signed-in layout (a header with the organization and "Sign out", a left
 * navigation, the page) and a bare centred card for pages without a session (sign-in problems,
 * errors). Styles and the one script come from our own origin (`/assets/…`), so the
 * Content-Security-Policy can forbid everything else, inline scripts included.
 */

/**
 * Where the signed-in visitor is: the organization shown in the header, the form token for "Sign
 * out", and whether the organization is a sandbox (every page then says so, in a banner and a badge).
 */
export interface SignedIn {
  readonly organizationName: string;
  readonly formToken: string;
  readonly sandbox?: boolean;
}

/** Sections of the navigation. */
export type Section = "api-keys" | "requests" | "webhooks" | "deliveries" | "event-catalog" | "api-reference" | "sessions" | "audit-log" | "sandbox" | "alerts";

/** Options of a signed-in page. */
export interface PageOptions {
  /** Reload the page by itself after this many seconds (a page that waits for something, such as a test event's attempt). */
  readonly refreshSeconds?: number;
}

/** The sandbox marker's styles: linked only on a sandbox session's pages. */
const SANDBOX_STYLES = html`
<link rel="stylesheet" href="/assets/sandbox.css">`;

const head = (title: string, options: PageOptions = {}, sandbox = false) => html`<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${options.refreshSeconds === undefined ? "" : html`<meta http-equiv="refresh" content="${options.refreshSeconds}">
`}<title>${title} · Platter Developer area</title>
<link rel="stylesheet" href="/assets/developer-area.css">${sandbox ? SANDBOX_STYLES : ""}
<script src="/assets/developer-area.js" defer></script>
</head>`;

const brand = html`<a class="brand" href="/api-keys"><span class="brand-mark" aria-hidden="true">P</span><span>Platter</span><span class="brand-area">Developers</span></a>`;

/** A hidden field with the session's form token: every form of the area carries one. */
export const formTokenField = (token: string): Html => html`<input type="hidden" name="form_token" value="${token}">`;

/** A signed-in page: header, navigation with `section` marked current, and `body`. */
export const signedInPage = (signedIn: SignedIn, section: Section, title: string, body: HtmlValue, options: PageOptions = {}): string =>
  html`<!doctype html>
<html lang="en">
${head(title, options, signedIn.sandbox === true)}
<body>
<a class="skip-link" href="#main">Skip to content</a>
${signedIn.sandbox === true ? html`<div class="sandbox-banner" role="note"><strong>Sandbox</strong> Test data and <code>platter_test_</code> keys only: nothing here reaches your live organization. <a href="/sandbox">Sandbox tools</a></div>
` : ""}<header class="topbar${signedIn.sandbox === true ? " topbar-sandbox" : ""}">
  ${brand}
  <div class="topbar-org" title="Organization">${signedIn.sandbox === true ? html`<span class="badge badge-sandbox">Sandbox</span> ` : ""}<span class="org-label">Organization</span> <strong>${signedIn.organizationName}</strong></div>
  <form class="sign-out" method="post" action="/sign-out">
    ${formTokenField(signedIn.formToken)}
    <button type="submit" class="button button-quiet">Sign out</button>
  </form>
</header>
<div class="shell">
  <nav class="sidenav" aria-label="Developer area">
    <ul>
      <li><a href="/api-keys"${section === "api-keys" ? html` aria-current="page"` : ""}>API keys</a></li>
      <li><a href="/requests"${section === "requests" ? html` aria-current="page"` : ""}>Request log</a></li>
      <li><a href="/webhooks"${section === "webhooks" ? html` aria-current="page"` : ""}>Webhooks</a></li>
      <li><a href="/deliveries"${section === "deliveries" ? html` aria-current="page"` : ""}>Deliveries</a></li>
      <li><a href="/alerts"${section === "alerts" ? html` aria-current="page"` : ""}>Alerts</a></li>
      <li><a href="/event-catalog"${section === "event-catalog" ? html` aria-current="page"` : ""}>Event catalog</a></li>
      <li><a href="/api-reference"${section === "api-reference" ? html` aria-current="page"` : ""}>API reference</a></li>
      <li><a href="/sessions"${section === "sessions" ? html` aria-current="page"` : ""}>Sessions</a></li>
      <li><a href="/audit-log"${section === "audit-log" ? html` aria-current="page"` : ""}>Audit log</a></li>
      <li><a href="/sandbox"${section === "sandbox" ? html` aria-current="page"` : ""}>Sandbox</a></li>
    </ul>
  </nav>
  <main id="main" tabindex="-1">
${body}
  </main>
</div>
</body>
</html>
`.text;

/** A page without a session: the brand and one card saying what happened and what to do. */
export const cardPage = (title: string, body: HtmlValue): string =>
  html`<!doctype html>
<html lang="en">
${head(title)}
<body class="bare">
<header class="topbar">${brand}</header>
<main id="main" class="card-page">
  <div class="card">
${body}
  </div>
</main>
</body>
</html>
`.text;
