import type { SandboxStanding } from "@platter/persistence";
import { type WebhookEventType } from "@platter/domain";
import { html, type HtmlValue } from "./html.ts";
import { formTokenField, type SignedIn, signedInPage } from "./layout.ts";

/**
 * The Sandbox page. In a live organization: create its sandbox, or open it (this browser switches
 * to a session of the sandbox). In a sandbox: a button per event type that makes one happen for
 * real (its endpoints get a real delivery), "Reset data" (with a confirmation step) and "Back to live".
 */

/** What each trigger does, in the words of the business. */
const TRIGGER_TEXT: Readonly<Record<WebhookEventType, string>> = {
  "event.created": "Creates an event, as the API's POST /v1/events does.",
  "event.inquiry": "Records an online catering request: a new client and an event in inquiry status.",
  "invoice.sent": "Marks the oldest draft invoice sent.",
  "invoice.paid": "Marks the oldest sent invoice paid in full.",
  "proposal.approved": "Records the client's approval of the oldest draft or sent proposal.",
  "client.created": "Creates a client, as the API's POST /v1/clients does.",
};

/** What the page says above its panels: a notice of what was just done, or why it was refused. */
export interface SandboxMessages {
  readonly notice?: string | undefined;
  readonly error?: string | undefined;
}

const messages = ({ notice, error }: SandboxMessages): HtmlValue => html`${notice === undefined ? "" : html`<div class="notice" role="status">${notice}</div>`}
    ${error === undefined ? "" : html`<div class="callout callout-danger" role="alert">${error}</div>`}`;

const switchForm = (signedIn: SignedIn, label: string, quiet: boolean) => html`<form method="post" action="/sandbox/switch" class="form-actions">
        ${formTokenField(signedIn.formToken)}
        <button type="submit" class="button${quiet ? "" : " button-primary"}">${label}</button>
      </form>`;

const livePanel = (signedIn: SignedIn, sandbox: { readonly id: number; readonly name: string } | null) =>
  sandbox === null
    ? html`<section class="panel" aria-labelledby="sandbox-heading">
      <h2 id="sandbox-heading">Create a sandbox</h2>
      <p>A sandbox is a separate organization linked to this one, with demo data (recipes, clients, events, proposals, invoices) you can
        reset at any time. Its API keys start <code>platter_test_</code>, and its webhook endpoints get real deliveries of every event type,
        which you make happen from its Sandbox page or with <code>platter trigger</code>. Nothing in it ever mixes with this organization's data.</p>
      <form method="post" action="/sandbox/create" class="form-actions">
        ${formTokenField(signedIn.formToken)}
        <button type="submit" class="button button-primary">Create sandbox</button>
      </form>
    </section>`
    : html`<section class="panel" aria-labelledby="sandbox-heading">
      <h2 id="sandbox-heading">Your sandbox</h2>
      <p><strong>${sandbox.name}</strong> (organization ${sandbox.id}) has its own API keys, webhook endpoints and deliveries.
        Opening it switches this browser to the sandbox; its pages say so at the top, and "Back to live" brings you here.</p>
      ${switchForm(signedIn, "Open sandbox", false)}
    </section>`;

const sandboxPanels = (signedIn: SignedIn, live: { readonly name: string }) => html`<section class="panel" aria-labelledby="trigger-heading">
      <h2 id="trigger-heading">Make an event happen</h2>
      <p class="hint">Each button changes the sandbox's data for real and records the event; every endpoint subscribed to its type gets a delivery
        (see Deliveries).</p>
      <ul class="trigger-list">
${(Object.keys(TRIGGER_TEXT) as WebhookEventType[]).map((type) => html`        <li>
          <code>${type}</code>
          <span class="hint">${TRIGGER_TEXT[type]}</span>
          <form method="post" action="/sandbox/trigger">
            ${formTokenField(signedIn.formToken)}
            <input type="hidden" name="type" value="${type}">
            <button type="submit" class="button">Trigger<span class="visually-hidden"> ${type}</span></button>
          </form>
        </li>
`)}      </ul>
    </section>
    <section class="panel" aria-labelledby="reset-heading">
      <h2 id="reset-heading">Reset data</h2>
      <p>Deletes the sandbox's events, clients, recipes, proposals and invoices and puts the demo data back. Its API keys, webhook endpoints
        and delivery history stay.</p>
      <div class="form-actions"><a class="button button-danger-quiet" href="/sandbox/reset">Reset data…</a></div>
    </section>
    <section class="panel" aria-labelledby="live-heading">
      <h2 id="live-heading">Back to live</h2>
      <p>Switches this browser back to <strong>${live.name}</strong>.</p>
      ${switchForm(signedIn, "Back to live", true)}
    </section>`;

/** The Sandbox page for where the organization stands. */
export const sandboxPage = (signedIn: SignedIn, standing: SandboxStanding, shown: SandboxMessages = {}): string =>
  signedInPage(signedIn, "sandbox", "Sandbox", html`
    <div class="page-header">
      <h1>Sandbox</h1>
      <p class="lede">${standing.kind === "sandbox"
        ? html`You are in the sandbox of <strong>${standing.live.name}</strong>: test data, <code>platter_test_</code> keys, real webhook deliveries.`
        : "Try your integration against test data, with every webhook event type delivered for real, without touching this organization."}</p>
    </div>
    ${messages(shown)}
    ${standing.kind === "sandbox" ? sandboxPanels(signedIn, standing.live) : livePanel(signedIn, standing.sandbox)}`);

/** The confirmation step before a sandbox's data is reset. */
export const confirmResetPage = (signedIn: SignedIn): string =>
  signedInPage(signedIn, "sandbox", "Reset sandbox data", html`
    <div class="page-header">
      <p class="breadcrumb"><a href="/sandbox">Sandbox</a></p>
      <h1>Reset the sandbox's data?</h1>
    </div>
    <section class="panel">
      <div class="callout callout-danger" role="note">Every event, client, recipe, proposal and invoice of the sandbox is deleted and the demo data
        put back. API keys, webhook endpoints and delivery history stay. This cannot be undone.</div>
      <form method="post" action="/sandbox/reset" class="form-actions">
        ${formTokenField(signedIn.formToken)}
        <button type="submit" class="button button-danger">Reset data</button>
        <a class="button" href="/sandbox">Cancel</a>
      </form>
    </section>`);
