import {
  DEVELOPER_SESSION_LIFETIME_MS, developerSessionScope, generateAccessToken, generateFormSecret, hashAccessToken, isAccessToken,
  NotFound, type OrgScope, sessionSecretContext, type SessionActor, SIGN_IN_LINK_LIFETIME_MS, SignInRefused, type SignInLinkOrigin, Unauthenticated, type DatabaseUnavailable,
} from "@platter/domain";
import { Context, Effect, Layer, Result } from "effect";
import { orDieButOutage } from "@platter/postgres";
import { Database } from "../database.ts";
import { nowPlus, nowPlusValue } from "../database-clock.ts";
import { DeveloperSessionEntity, DeveloperSignInLinkEntity } from "../entities/index.ts";
import { isoTimestamp } from "../keyset-page.ts";
import { orgSql, raw, sql } from "../org-sql.ts";
import { openedSecrets, openOrUnavailable } from "../webhooks/opened-secrets.ts";

/**
 * Developer-area access: single-use sign-in links for one organization, the sessions they open,
 * and session authentication, the one place a session's scope is made. Expiry is decided by the
 * database's clock (`now()`), as for keys and leases; a link is claimed by one conditional update, so two openings of it never both succeed.
 */

/** A live Developer-area session, as authentication found it: the only way to its organization's scope. */
export interface DeveloperSession extends SessionActor {
  /** The secret the session's forms must carry back. */
  readonly formSecret: string;
  readonly expiresAt: string;
}

/** A new sign-in link's token (shown once, never stored) and when it stops working. */
export interface CreatedSignInLink {
  readonly id: number;
  readonly token: string;
  readonly expires_at: string;
}

/** One live session of an organization, as its Sessions page lists it. */
export interface SessionView {
  readonly id: number;
  /** Where it was opened (`Chrome on Linux`); `null` for a session opened before hints were kept. */
  readonly device_hint: string | null;
  readonly started_at: string;
  /** When it was last used (to the minute); `null` for a session opened before this was kept. */
  readonly last_seen_at: string | null;
  readonly expires_at: string;
}

/** How often at most a session's `last_seen_at` is written: authentication stays one read otherwise. */
export const LAST_SEEN_RESOLUTION_MS = 60_000;

/** A session (`s`) last seen a resolution ago or more, by the database's clock. */
const SEEN_LONG_AGO = `s.last_seen_at <= ${nowPlus(-LAST_SEEN_RESOLUTION_MS)}`;

/** A new session's token (the cookie's value, never stored) and when it ends. */
export interface OpenedSession {
  readonly token: string;
  readonly expires_at: string;
}

interface SessionRow {
  id: string;
  organization_id: string;
  link_id: string;
  form_secret: string;
  token_hash: string;
  expires_at: string;
  currency: string;
  seen_long_ago: boolean;
}


/** Sign-in links, sessions and session authentication of the Developer area. */
export class DeveloperSessions extends Context.Service<
  DeveloperSessions,
  {
    /** A single-use sign-in link for the scope's organization, valid `SIGN_IN_LINK_LIFETIME_MS` from now. */
    readonly createLink: (scope: OrgScope, requestedBy: SignInLinkOrigin) => Effect.Effect<CreatedSignInLink, DatabaseUnavailable>;
    /**
     * The organization a link's token would sign in to, without using the link up (the page a
     * link opens, so that a link scanner's GET leaves it working); used, expired or unknown is `SignInRefused`.
     */
    readonly checkLink: (linkToken: string) => Effect.Effect<{ readonly organizationName: string }, SignInRefused | DatabaseUnavailable>;
    /**
     * Opens a session with a link's token and uses the link up; a used, expired or unknown link is
     * `SignInRefused`. `deviceHint` (see the domain's `deviceHint`) is kept to tell sessions apart.
     */
    readonly signIn: (linkToken: string, deviceHint?: string) => Effect.Effect<OpenedSession, SignInRefused | DatabaseUnavailable>;
    /**
     * The live session of a token, or `Unauthenticated` (unknown, expired, signed out or ended).
     * The only maker of session scopes. Notes the session as seen now, at most once a
     * `LAST_SEEN_RESOLUTION_MS`, off the request's path (a lost note never fails the request).
     */
    readonly authenticate: (sessionToken: string) => Effect.Effect<DeveloperSession, Unauthenticated | DatabaseUnavailable>;
    /** Ends the session at once; ending it again is harmless. */
    readonly signOut: (session: DeveloperSession) => Effect.Effect<void, NotFound | DatabaseUnavailable>;
    /** The organization's live sessions, the most recently seen first. */
    readonly list: (scope: OrgScope) => Effect.Effect<ReadonlyArray<SessionView>, DatabaseUnavailable>;
    /**
     * Ends one of the organization's sessions at once (its next request is signed out); `changed`
     * is false for one already ended or expired. `NotFound` for another organization's.
     */
    readonly end: (scope: OrgScope, id: number) => Effect.Effect<{ readonly changed: boolean }, NotFound | DatabaseUnavailable>;
    /** Ends every live session of the organization but `exceptId` (when given); returns the ids ended. */
    readonly endAll: (scope: OrgScope, exceptId?: number) => Effect.Effect<ReadonlyArray<number>, DatabaseUnavailable>;
  }
>()("platter/persistence/DeveloperSessions") {
  static readonly layer = Layer.effect(
    DeveloperSessions,
    Effect.gen(function* () {
      const database = yield* Database;
      // Every page load authenticates its session: its form secret is opened once per stored value.
      const formSecrets = openedSecrets(database.secrets);
      /** Records that the session was seen now, unless another request did within the resolution. Fire and forget. */
      const noteSeen = (scope: OrgScope, sessionId: number) => {
        Effect.runFork(
          orgSql(database, scope).update({
            table: "developer_sessions",
            as: "s",
            set: sql`last_seen_at = now()`,
            where: sql`s.id = ${sessionId} and (s.last_seen_at is null or ${raw(SEEN_LONG_AGO)})`,
          }).pipe(Effect.ignoreCause),
        );
      };
      /** A live session (`s`): not ended, not expired by the database's clock. */
      const live = raw("s.ended_at is null and s.expires_at > now()");
      return DeveloperSessions.of({
        createLink: Effect.fnUntraced(function* (scope: OrgScope, requestedBy: SignInLinkOrigin) {
          const { token, hash } = generateAccessToken();
          const org = orgSql(database, scope);
          const id = yield* org.insert(DeveloperSignInLinkEntity, {
            tokenHash: hash,
            requestedBy,
            createdAt: nowPlusValue(),
            expiresAt: nowPlusValue(SIGN_IN_LINK_LIFETIME_MS),
            usedAt: null,
          });
          const { expires_at } = yield* org.one<{ expires_at: string }>({
            columns: `${isoTimestamp("l.expires_at")} as expires_at`, from: "developer_sign_in_links", as: "l", where: sql`l.id = ${id}`,
          }).pipe(orDieButOutage);
          return { id, token, expires_at };
        }),
        checkLink: Effect.fnUntraced(function* (linkToken: string) {
          if (!isAccessToken(linkToken)) return yield* new SignInRefused({ reason: "unknown" });
          // Before a scope exists: the link's hash is the only thing that selects the organization.
          const [link] = yield* database.rows<{ name: string; used: boolean; expired: boolean }>(
            `select o.name, l.used_at is not null as used, l.expires_at <= now() as expired
             from developer_sign_in_links l join organizations o on o.id = l.organization_id
             where l.token_hash = ?`,
            [hashAccessToken(linkToken)],
          );
          if (link === undefined) return yield* new SignInRefused({ reason: "unknown" });
          if (link.used) return yield* new SignInRefused({ reason: "used" });
          if (link.expired) return yield* new SignInRefused({ reason: "expired" });
          return { organizationName: link.name };
        }),
        signIn: Effect.fnUntraced(function* (linkToken: string, deviceHint?: string) {
          if (!isAccessToken(linkToken)) return yield* new SignInRefused({ reason: "unknown" });
          const hash = hashAccessToken(linkToken);
          // Before a scope exists: the link's hash is the only thing that selects the organization,
          // and one conditional update both checks and uses the link up.
          const [link] = yield* database.rows<{ id: string; organization_id: string; currency: string; expires_at: string }>(
            `update developer_sign_in_links l set used_at = now()
             from organizations o
             where o.id = l.organization_id and l.token_hash = ? and l.used_at is null and l.expires_at > now()
             returning l.id, l.organization_id, o.currency,
               ${isoTimestamp(nowPlus(DEVELOPER_SESSION_LIFETIME_MS))} as expires_at`,
            [hash],
          );
          if (link === undefined) {
            const [known] = yield* database.rows<{ used: boolean }>(
              "select used_at is not null as used from developer_sign_in_links where token_hash = ?",
              [hash],
            );
            return yield* new SignInRefused({ reason: known === undefined ? "unknown" : known.used ? "used" : "expired" });
          }
          const scope = developerSessionScope(Number(link.organization_id), link.currency);
          const session = generateAccessToken();
          // The session's times are the link update's `now()`: the one the link was used at.
          const expires = link.expires_at;
          yield* orgSql(database, scope).insert(DeveloperSessionEntity, {
            link: Number(link.id),
            tokenHash: session.hash,
            // Sealed for the session's row, which its token's hash names.
            formSecret: database.secrets.seal(generateFormSecret(), sessionSecretContext(scope.organizationId, session.hash)),
            createdAt: new Date(Date.parse(expires) - DEVELOPER_SESSION_LIFETIME_MS),
            expiresAt: new Date(expires),
            endedAt: null,
            deviceHint: deviceHint ?? null,
            lastSeenAt: new Date(Date.parse(expires) - DEVELOPER_SESSION_LIFETIME_MS),
          });
          return { token: session.token, expires_at: expires };
        }),
        authenticate: Effect.fnUntraced(function* (sessionToken: string) {
          if (!isAccessToken(sessionToken)) return yield* new Unauthenticated();
          // Before a scope exists: the session's hash is the only thing that selects the organization.
          const [row] = yield* database.rows<SessionRow>(
            `select s.id, s.organization_id, s.link_id, s.form_secret, s.token_hash, ${isoTimestamp("s.expires_at")} as expires_at, o.currency,
               coalesce(${SEEN_LONG_AGO}, true) as seen_long_ago
             from developer_sessions s join organizations o on o.id = s.organization_id
             where s.token_hash = ? and s.ended_at is null and s.expires_at > now()`,
            [hashAccessToken(sessionToken)],
          );
          if (row === undefined) return yield* new Unauthenticated();
          // A form secret sealed with a key this process lacks: this process cannot check the
          // session's forms, so it is signed out here (a new sign-in seals with this process's key).
          const formSecret = openOrUnavailable(formSecrets, row.form_secret, sessionSecretContext(row.organization_id, row.token_hash));
          if (Result.isFailure(formSecret)) return yield* new Unauthenticated();
          const scope = developerSessionScope(Number(row.organization_id), row.currency);
          if (row.seen_long_ago) noteSeen(scope, Number(row.id));
          return {
            _tag: "DeveloperSession",
            scope,
            sessionId: Number(row.id),
            linkId: Number(row.link_id),
            formSecret: formSecret.success,
            expiresAt: row.expires_at,
          };
        }),
        signOut: Effect.fnUntraced(function* (session: DeveloperSession) {
          const [row] = yield* orgSql(database, session.scope).update<{ id: string }>({
            table: "developer_sessions",
            as: "s",
            set: raw("ended_at = coalesce(s.ended_at, now())"),
            where: sql`s.id = ${session.sessionId}`,
            returning: "s.id",
          });
          if (row === undefined) return yield* new NotFound();
        }),
        list: Effect.fnUntraced(function* (scope: OrgScope) {
          const rows = yield* orgSql(database, scope).select<Omit<SessionView, "id"> & { id: string }>({
            columns: `s.id, s.device_hint, ${isoTimestamp("s.created_at")} as started_at, ${isoTimestamp("s.last_seen_at")} as last_seen_at,
              ${isoTimestamp("s.expires_at")} as expires_at`,
            from: "developer_sessions",
            as: "s",
            where: live,
            rest: raw("order by coalesce(s.last_seen_at, s.created_at) desc, s.id desc"),
          });
          return rows.map((row) => ({ ...row, id: Number(row.id) }));
        }),
        end: Effect.fnUntraced(function* (scope: OrgScope, id: number) {
          const org = orgSql(database, scope);
          const ended = yield* org.update({
            table: "developer_sessions",
            as: "s",
            set: raw("ended_at = now()"),
            where: sql`s.id = ${id} and ${live}`,
            returning: "s.id",
          });
          if (ended.length > 0) return { changed: true };
          // Already ended or expired (changes nothing), or not the organization's (NotFound).
          yield* org.one({ columns: "s.id", from: "developer_sessions", as: "s", where: sql`s.id = ${id}` });
          return { changed: false };
        }),
        endAll: Effect.fnUntraced(function* (scope: OrgScope, exceptId?: number) {
          const ended = yield* orgSql(database, scope).update<{ id: string }>({
            table: "developer_sessions",
            as: "s",
            set: raw("ended_at = now()"),
            where: exceptId === undefined ? live : sql`${live} and s.id <> ${exceptId}`,
            returning: "s.id",
          });
          return ended.map((row) => Number(row.id)).sort((x, y) => x - y);
        }),
      });
    }),
  );
}
