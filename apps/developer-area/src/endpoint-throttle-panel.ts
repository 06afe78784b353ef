import { ENDPOINT_THROTTLE_MAX_PER_SECOND } from "@platter/domain";
import type { WebhookEndpointOverview } from "@platter/persistence";
import { html } from "./html.ts";
import { formTokenField, type SignedIn } from "./layout.ts";

/**
 * The endpoint page's throttle panel: at most so many deliveries a second to this endpoint across
 * every dispatcher, or none. Its own small form (`POST /webhooks/:id/throttle`), apart from the
 * endpoint's other settings.
 */

/** The throttle form as last sent, and why it was refused. */
export interface ThrottleForm {
  readonly perSecond: string;
  readonly error: string;
}

/** The throttle panel of `endpoint`'s page; `form` when the last one sent was refused. */
export const throttlePanel = (signedIn: SignedIn, endpoint: WebhookEndpointOverview, form: ThrottleForm | undefined) => html`
    <section class="panel" aria-labelledby="throttle-heading">
      <h2 id="throttle-heading">Throttle</h2>
      <p>For a receiver that can take only so much: Platter sends this endpoint at most this many deliveries a second, whatever is
        queued and however many dispatchers run. Deliveries beyond it wait their turn in order; nothing is dropped.</p>
      <form method="post" action="/webhooks/${endpoint.id}/throttle" class="inline-form" novalidate>
        ${formTokenField(signedIn.formToken)}
        <div class="field">
          <label for="throttle-per-second">Deliveries per second</label>
          <input id="throttle-per-second" name="per_second" type="text" inputmode="numeric" autocomplete="off" maxlength="20" size="8"
            placeholder="none" value="${form?.perSecond ?? (endpoint.throttle_per_second === null ? "" : String(endpoint.throttle_per_second))}"${
              form === undefined ? "" : html` aria-invalid="true" aria-describedby="throttle-error"`}>
        </div>
        <button type="submit" class="button button-primary">Save throttle</button>
      </form>
      ${form === undefined
        ? html`<p class="hint">1 to ${ENDPOINT_THROTTLE_MAX_PER_SECOND}; leave it empty for no throttle.</p>`
        : html`<p class="field-error" id="throttle-error" role="alert">${form.error}</p>`}
      ${endpoint.throttle_per_second === null
        ? ""
        : html`<form method="post" action="/webhooks/${endpoint.id}/throttle" class="form-actions">
        ${formTokenField(signedIn.formToken)}
        <input type="hidden" name="per_second" value="none">
        <button type="submit" class="button button-quiet">Remove throttle</button>
      </form>`}
    </section>`;
