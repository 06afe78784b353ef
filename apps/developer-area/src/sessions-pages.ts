import type { SessionView } from "@platter/persistence";
import { html } from "./html.ts";
import { formTokenField, type SignedIn, signedInPage } from "./layout.ts";
import { when } from "./pages.ts";

/**
 * The Sessions page: the organization's live Developer-area sessions (where each was opened, when
 * it started and was last seen), which one is this browser, and buttons that end one or all the
 * others (a leaked sign-in link's session, a browser left signed in).
 */

/** A session's device as shown: its hint, or a sentence for a session opened before hints were kept. */
export const deviceLabel = (hint: string | null): string => hint ?? "Unknown device";

const sessionRow = (signedIn: SignedIn, session: SessionView, current: boolean) => html`<tr${current ? html` class="current"` : ""}>
      <td class="name">${deviceLabel(session.device_hint)}${current ? html` <span class="badge badge-active">This browser</span>` : ""}</td>
      <td data-label="Started">${when(session.started_at)}</td>
      <td data-label="Last seen">${when(session.last_seen_at)}</td>
      <td data-label="Ends">${when(session.expires_at)}</td>
      <td class="actions">
        <form method="post" action="/sessions/${session.id}/end">
          ${formTokenField(signedIn.formToken)}
          <button type="submit" class="button${current ? "" : " button-danger-quiet"}">${current ? "Sign out" : "End session"}<span class="visually-hidden"> ${deviceLabel(session.device_hint)} started ${session.started_at}</span></button>
        </form>
      </td>
    </tr>`;

/** The organization's live sessions, `currentId` being this browser's; `notice` says what was just ended. */
export const sessionsPage = (signedIn: SignedIn, sessions: ReadonlyArray<SessionView>, currentId: number, notice?: string): string => {
  const others = sessions.filter((session) => session.id !== currentId).length;
  return signedInPage(signedIn, "sessions", "Sessions", html`
    <div class="page-header">
      <h1>Sessions</h1>
      <p class="lede">Everyone signed in to your organization's Developer area, on every device. End any session you do not recognise:
        its next page asks to sign in again. A session lasts a working day.</p>
    </div>
    ${notice === undefined ? "" : html`<div class="notice" role="status">${notice}</div>`}
    <section class="panel" aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Signed-in sessions</h2>
      <div class="table-scroll"><table class="keys sessions">
        <thead><tr><th scope="col">Device</th><th scope="col">Started</th><th scope="col">Last seen</th><th scope="col">Ends</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>
    ${sessions.map((session) => sessionRow(signedIn, session, session.id === currentId))}
        </tbody>
      </table></div>
      ${others === 0
        ? html`<p class="hint">No other session is signed in.</p>`
        : html`<form method="post" action="/sessions/end-others" class="form-actions end-others">
        ${formTokenField(signedIn.formToken)}
        <button type="submit" class="button button-danger">End all other sessions</button>
        <span class="hint">Signs out the ${others === 1 ? "other session" : `${others} other sessions`}; this browser stays signed in.</span>
      </form>`}
    </section>`);
};
