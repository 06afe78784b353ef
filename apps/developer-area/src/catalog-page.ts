import { messageExamples } from "@platter/domain";
import { html } from "./html.ts";
import { type SignedIn, signedInPage } from "./layout.ts";

/**
 * The event catalog: every event type a webhook endpoint can subscribe to, when it is sent, and an
 * example envelope generated from the domain's message schemas (`messageExamples`), exactly as a
 * receiver gets it.
 */

/** The examples, generated once: they depend on nothing but the code. */
const EXAMPLES = messageExamples();

/** The event catalog page. */
export const eventCatalogPage = (signedIn: SignedIn): string =>
  signedInPage(signedIn, "event-catalog", "Event catalog", html`
    <div class="page-header">
      <h1>Event catalog</h1>
      <p class="lede">The event types your webhook endpoints can subscribe to. Each message is a POST of a JSON envelope
        <code>{id, type, created_at, data}</code>, where <code>data</code> is the record as the API shows it.
        Deduplicate on <code>id</code>: every retry and replay sends the same one.</p>
    </div>
    <nav class="panel toc" aria-label="Event types">
      <ul>
        ${EXAMPLES.map((example) => html`<li><a href="#${example.type}"><code>${example.type}</code></a></li>`)}
      </ul>
    </nav>
    ${EXAMPLES.map((example) => html`<section class="panel event-type" id="${example.type}" aria-labelledby="heading-${example.type}">
      <h2 id="heading-${example.type}"><code>${example.type}</code></h2>
      <p>${example.description}</p>
      <h3>Example</h3>
      <pre class="payload">${JSON.stringify(example.envelope, null, 2)}</pre>
    </section>`)}`);
