import type Router from "@koa/router";
import { AuditEntries } from "@platter/application";
import { auditLogListing, parseAuditLogFilter, parsePageRequest } from "@platter/domain";
import type { DeveloperSession, RequestStorage } from "@platter/persistence";
import { type Effect, Result } from "effect";
import type { Context, Middleware } from "koa";
import { auditLogPage, type AuditPageState } from "./audit-pages.ts";
import type { SignedIn } from "./layout.ts";
import { page } from "./page-responses.ts";
import { sessionOf } from "./session.ts";

/**
 * The Audit log route: the organization's entries, read as the session (`AuditEntries`), newest
 * first, filtered and paged by cursor. A filter or page link that cannot be read is a 400 page
 * naming the field, and nothing is read.
 */

/** What this route shares with the area's other routes. */
export interface AuditRouteKit {
  /** Requires a live session (otherwise the sign-in page). */
  readonly signedInOnly: Middleware;
  /** The header's organization name and the session's form token. */
  readonly signedIn: (ctx: Context, session: DeveloperSession) => Promise<SignedIn>;
  /** Runs one storage program of the request `ctx` (see `runProgram`; a GET's reads may go to a replica). */
  readonly run: <A, E>(ctx: Context, program: Effect.Effect<A, E, RequestStorage>) => Promise<A>;
}

/** Entries per page. */
export const AUDIT_PAGE_SIZE = 50;

/** Adds the Audit log route to `router`. */
export const addAuditRoutes = (router: Router, kit: AuditRouteKit): void => {
  const { signedInOnly, signedIn, run } = kit;

  router.get("/audit-log", signedInOnly, async (ctx) => {
    const session = sessionOf(ctx);
    const actions = await run(ctx, AuditEntries.actions(session));
    const filter = parseAuditLogFilter(ctx.query);
    const pageRequest = parsePageRequest(auditLogListing, { limit: String(AUDIT_PAGE_SIZE), cursor: ctx.query["cursor"] });
    // An action the log does not hold is refused like a malformed one: the choices are the log's own.
    const unknownAction = Result.isSuccess(filter) && filter.success.action !== undefined && !actions.includes(filter.success.action);
    if (Result.isFailure(filter) || unknownAction || Result.isFailure(pageRequest)) {
      const entered = Object.fromEntries(["action", "actor", "from", "to"].map((name) => [name, String(ctx.query[name] ?? "")]));
      const error = Result.isFailure(filter)
        ? filter.failure.message
        : unknownAction
          ? "action must be one of the actions in the log"
          : "This page link is not valid: start again from the newest entries.";
      const state: AuditPageState = { filter: {}, entered, error, actions, deeper: false };
      return page(ctx, 400, auditLogPage(await signedIn(ctx, session), state, undefined));
    }
    const log = await run(ctx, AuditEntries.page(session, filter.success, pageRequest.success));
    const state: AuditPageState = { filter: filter.success, actions, deeper: pageRequest.success.after !== undefined };
    page(ctx, 200, auditLogPage(await signedIn(ctx, session), state, log));
  });
};
