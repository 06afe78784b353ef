import type Router from "@koa/router";
import { Sandbox } from "@platter/application";
import { type DatabaseUnavailable, deviceHint, type InvalidTransition, type NotFound, parseSandboxTrigger, SANDBOX_TRIGGERS } from "@platter/domain";
import type { DeveloperSession, RequestStorage } from "@platter/persistence";
import { Effect, Result } from "effect";
import type { Context, Middleware } from "koa";
import { shownOnForm } from "./error-pages.ts";
import type { SignedIn } from "./layout.ts";
import { page, redirect } from "./page-responses.ts";
import { confirmResetPage, type SandboxMessages, sandboxPage } from "./sandbox-pages.ts";
import { limited } from "./organization-limits.ts";
import { type CookiePolicy, type FormRoute, sessionOf, setSessionCookie } from "./session.ts";

/**
 * The Sandbox routes: creating a live organization's sandbox (audited `sandbox.created`), switching
 * this browser between the live organization and its sandbox (a session of the other opened at once
 * from this one, which ends), and, in a sandbox session only, triggering each event type
 * (`sandbox.triggered`) and resetting the demo data (`sandbox.reset`, after a confirmation page).
 * A bad event type is a 400 and a live organization's trigger or reset a 409; neither writes anything.
 */

/** What these routes share with the area's other routes. */
export interface SandboxRouteKit {
  /** How the session cookie is written (replaced when this browser switches organization). */
  readonly cookies: CookiePolicy;
  /** Requires a live session (otherwise the sign-in page). */
  readonly signedInOnly: Middleware;
  /** Adds a signed-in POST route, its form checked first (`formRoutes`). */
  readonly post: FormRoute;
  /** The header's organization name, the session's form token and whether it is a sandbox. */
  readonly signedIn: (ctx: Context, session: DeveloperSession) => Promise<SignedIn>;
  /** Runs one storage program of the request `ctx` (see `runProgram`). */
  readonly run: <A, E>(ctx: Context, program: Effect.Effect<A, E, RequestStorage>) => Promise<A>;
}

/** What the page says after the change it was redirected from (`?created`, `?triggered=<type>`, `?reset`). */
const noticeOf = (query: Context["query"]): string | undefined => {
  if (query["created"] === "1") return "Your sandbox is ready, with demo data. Open it to make its API keys and webhook endpoints.";
  if (query["reset"] === "1") return "The sandbox's data was reset to the demo data.";
  const triggered = query["triggered"];
  if (typeof triggered === "string" && (SANDBOX_TRIGGERS as ReadonlyArray<string>).includes(triggered)) {
    return `${triggered} happened in the sandbox: every endpoint subscribed to it gets a delivery (see Deliveries).`;
  }
  return undefined;
};

/** Adds the Sandbox routes to `router`. */
export const addSandboxRoutes = (router: Router, kit: SandboxRouteKit): void => {
  const { cookies, signedInOnly, post, signedIn, run } = kit;

  /** The Sandbox page with `shown`, answered `status`. */
  const sandboxAnswer = async (ctx: Context, session: DeveloperSession, status: number, shown: SandboxMessages) =>
    page(ctx, status, sandboxPage(await signedIn(ctx, session), await run(ctx, Sandbox.standing(session)), shown));

  /** Runs a sandbox change; a refusal (`InvalidTransition`) is the Sandbox page with its message (409), nothing written. */
  const change = async <A>(ctx: Context, session: DeveloperSession, program: Effect.Effect<A, InvalidTransition | NotFound | DatabaseUnavailable, RequestStorage>) => {
    const outcome = await run(ctx, shownOnForm(program, "InvalidTransition"));
    if (outcome.done) return outcome;
    await sandboxAnswer(ctx, session, outcome.refusal.status, { error: outcome.refusal.text });
    return undefined;
  };

  router.get("/sandbox", signedInOnly, async (ctx) => {
    await sandboxAnswer(ctx, sessionOf(ctx), 200, { notice: noticeOf(ctx.query) });
  });

  post("/sandbox/create", limited("sandboxResets", "/sandbox"), async (ctx, _form, session) => {
    if ((await change(ctx, session, Sandbox.create(session))) !== undefined) redirect(ctx, "/sandbox?created=1");
  });

  // The other side's session, opened from this one (which ends): live → sandbox, or sandbox → live.
  post("/sandbox/switch", limited("sandboxSwitches", "/sandbox"), async (ctx, _form, session) => {
    // Back to live is refused (409, this session unchanged) unless this session came in by a switch.
    const opened = await change(ctx, session, Sandbox.switchSession(session, deviceHint(ctx.get("user-agent"))));
    if (opened === undefined) return;
    setSessionCookie(ctx, cookies, opened.value.token, opened.value.expires_at);
    redirect(ctx, "/sandbox");
  });

  post("/sandbox/trigger", limited("testEvents", "/sandbox"), async (ctx, form, session) => {
    const type = parseSandboxTrigger(form["type"] ?? "");
    if (Result.isFailure(type)) return sandboxAnswer(ctx, session, 400, { error: type.failure.message });
    if ((await change(ctx, session, Sandbox.trigger(session, type.success))) !== undefined) redirect(ctx, `/sandbox?triggered=${type.success}`);
  });

  router.get("/sandbox/reset", signedInOnly, async (ctx) => {
    const session = sessionOf(ctx);
    const standing = await run(ctx, Sandbox.standing(session));
    if (standing.kind !== "sandbox") return redirect(ctx, "/sandbox");
    page(ctx, 200, confirmResetPage(await signedIn(ctx, session)));
  });

  post("/sandbox/reset", limited("sandboxResets", "/sandbox"), async (ctx, _form, session) => {
    if ((await change(ctx, session, Sandbox.reset(session))) !== undefined) redirect(ctx, "/sandbox?reset=1");
  });
};
