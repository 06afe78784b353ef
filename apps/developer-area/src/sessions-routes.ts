import type Router from "@koa/router";
import { DeveloperAreaSessions } from "@platter/application";
import type { DeveloperSession, RequestStorage } from "@platter/persistence";
import type { Effect } from "effect";
import type { Context, Middleware } from "koa";
import type { SignedIn } from "./layout.ts";
import { page, recordIdOf, redirect } from "./page-responses.ts";
import { sessionsPage } from "./sessions-pages.ts";
import { unlimited } from "./organization-limits.ts";
import { clearSessionCookie, type CookiePolicy, type FormRoute, sessionOf } from "./session.ts";

/**
 * The Sessions routes: the organization's live sessions, read as the session, and ending them
 * (`DeveloperAreaSessions`, audited `developer_session.ended`), checked (origin and form token)
 * first. Another organization's session is the 404 page and nothing changes; ending this
 * browser's own session signs it out.
 */

/** What these routes share with the area's other routes. */
export interface SessionRouteKit {
  /** How the session cookie is written (cleared when this browser's session is ended). */
  readonly cookies: CookiePolicy;
  /** Requires a live session (otherwise the sign-in page). */
  readonly signedInOnly: Middleware;
  /** Adds a signed-in POST route, its form checked first (`formRoutes`). */
  readonly post: FormRoute;
  /** The header's organization name and the session's form token. */
  readonly signedIn: (ctx: Context, session: DeveloperSession) => Promise<SignedIn>;
  /** Runs one storage program of the request `ctx` (see `runProgram`; a GET's reads may go to a replica). */
  readonly run: <A, E>(ctx: Context, program: Effect.Effect<A, E, RequestStorage>) => Promise<A>;
}

/** What the page says after an end it was redirected from (`?ended=n`). */
const endedNotice = (query: Context["query"]): string | undefined => {
  const text = query["ended"];
  if (typeof text !== "string" || !/^\d{1,9}$/.test(text)) return undefined;
  const count = Number(text);
  return count === 0
    ? "Nothing to end: that session had already ended."
    : `${count === 1 ? "1 session was" : `${count} sessions were`} ended: ${count === 1 ? "its" : "their"} next page asks to sign in again.`;
};

/** Adds the Sessions routes to `router`. */
export const addSessionRoutes = (router: Router, kit: SessionRouteKit): void => {
  const { cookies, signedInOnly, post, signedIn, run } = kit;

  router.get("/sessions", signedInOnly, async (ctx) => {
    const session = sessionOf(ctx);
    const sessions = await run(ctx, DeveloperAreaSessions.list(session));
    page(ctx, 200, sessionsPage(await signedIn(ctx, session), sessions, session.sessionId, endedNotice(ctx.query)));
  });

  post("/sessions/end-others", unlimited("ending sessions makes nothing: each session ends once, and ending an ended one changes nothing"), async (ctx, _form, session) => {
    const ended = await run(ctx, DeveloperAreaSessions.endOthers(session));
    redirect(ctx, `/sessions?ended=${ended.length}`);
  });

  post("/sessions/:id/end", unlimited("ending a session makes nothing: it ends once, and ending an ended one changes nothing"), async (ctx, _form, session) => {
    const id = recordIdOf(ctx);
    const { changed } = await run(ctx, DeveloperAreaSessions.end(session, id));
    if (id !== session.sessionId) return redirect(ctx, `/sessions?ended=${changed ? 1 : 0}`);
    // This browser's own session: that is signing out.
    clearSessionCookie(ctx, cookies);
    redirect(ctx, "/signed-out");
  });
};
