import {
  DEVELOPER_SESSION_LIFETIME_MS, developerSessionScope, generateAccessToken, generateFormSecret, hashAccessToken, isAccessToken,
  NotFound, type OrgScope, type SessionActor, SIGN_IN_LINK_LIFETIME_MS, SignInRefused, type SignInRequester, Unauthenticated,
} from "@platter/domain";
import { Clock, Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { DeveloperSessionEntity, DeveloperSignInLinkEntity } from "../entities/index.ts";
import { isoTimestamp } from "../keyset-page.ts";
import { orgSql, sql } from "../org-sql.ts";
import { traced } from "../traced.ts";

/**
 * Developer-area access: single-use sign-in links for one organization, the sessions they open,
 * and session authentication, the one place a session's scope is made. Expiry is decided by the
 * Clock; a link is claimed by one conditional update, so two openings of it never both succeed.
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
  expires_at: string;
  currency: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Sign-in links, sessions and session authentication of the Developer area. */
export class DeveloperSessions extends Context.Service<
  DeveloperSessions,
  {
    /** A single-use sign-in link for the scope's organization, valid `SIGN_IN_LINK_LIFETIME_MS` from now. */
    readonly createLink: (scope: OrgScope, requestedBy: SignInRequester) => Effect.Effect<CreatedSignInLink>;
    /**
     * The organization a link's token would sign in to, without using the link up (the page a
     * link opens, so that a link scanner's GET leaves it working); used, expired or unknown is `SignInRefused`.
     */
    readonly checkLink: (linkToken: string) => Effect.Effect<{ readonly organizationName: string }, SignInRefused>;
    /** Opens a session with a link's token and uses the link up; a used, expired or unknown link is `SignInRefused`. */
    readonly signIn: (linkToken: string) => Effect.Effect<OpenedSession, SignInRefused>;
    /** The live session of a token, or `Unauthenticated` (unknown, expired or signed out). The only maker of session scopes. */
    readonly authenticate: (sessionToken: string) => Effect.Effect<DeveloperSession, Unauthenticated>;
    /** Ends the session at once; ending it again is harmless. */
    readonly signOut: (session: DeveloperSession) => Effect.Effect<void, NotFound>;
  }
>()("platter/persistence/DeveloperSessions") {
  static readonly layer = Layer.effect(
    DeveloperSessions,
    Effect.gen(function* () {
      const database = yield* Database;
      return DeveloperSessions.of({
        createLink: traced("DeveloperSessions.createLink")(Effect.fnUntraced(function* (scope: OrgScope, requestedBy: SignInRequester) {
          const now = yield* Clock.currentTimeMillis;
          const { token, hash } = generateAccessToken();
          const expires = iso(now + SIGN_IN_LINK_LIFETIME_MS);
          const id = yield* orgSql(database, scope).insert(DeveloperSignInLinkEntity, {
            tokenHash: hash,
            requestedBy,
            createdAt: new Date(now),
            expiresAt: new Date(expires),
            usedAt: null,
          });
          return { id, token, expires_at: expires };
        })),
        checkLink: traced("DeveloperSessions.checkLink")(Effect.fnUntraced(function* (linkToken: string) {
          if (!isAccessToken(linkToken)) return yield* new SignInRefused({ reason: "unknown" });
          const now = yield* Clock.currentTimeMillis;
          // Before a scope exists: the link's hash is the only thing that selects the organization.
          const [link] = yield* database.rows<{ name: string; used: boolean; expired: boolean }>(
            `select o.name, l.used_at is not null as used, l.expires_at <= ?::timestamptz as expired
             from developer_sign_in_links l join organizations o on o.id = l.organization_id
             where l.token_hash = ?`,
            [iso(now), hashAccessToken(linkToken)],
          );
          if (link === undefined) return yield* new SignInRefused({ reason: "unknown" });
          if (link.used) return yield* new SignInRefused({ reason: "used" });
          if (link.expired) return yield* new SignInRefused({ reason: "expired" });
          return { organizationName: link.name };
        })),
        signIn: traced("DeveloperSessions.signIn")(Effect.fnUntraced(function* (linkToken: string) {
          if (!isAccessToken(linkToken)) return yield* new SignInRefused({ reason: "unknown" });
          const now = yield* Clock.currentTimeMillis;
          const hash = hashAccessToken(linkToken);
          // Before a scope exists: the link's hash is the only thing that selects the organization,
          // and one conditional update both checks and uses the link up.
          const [link] = yield* database.rows<{ id: string; organization_id: string; currency: string }>(
            `update developer_sign_in_links l set used_at = ?::timestamptz
             from organizations o
             where o.id = l.organization_id and l.token_hash = ? and l.used_at is null and l.expires_at > ?::timestamptz
             returning l.id, l.organization_id, o.currency`,
            [iso(now), hash, iso(now)],
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
          const expires = iso(now + DEVELOPER_SESSION_LIFETIME_MS);
          yield* orgSql(database, scope).insert(DeveloperSessionEntity, {
            link: Number(link.id),
            tokenHash: session.hash,
            formSecret: generateFormSecret(),
            createdAt: new Date(now),
            expiresAt: new Date(expires),
            endedAt: null,
          });
          return { token: session.token, expires_at: expires };
        })),
        authenticate: traced("DeveloperSessions.authenticate")(Effect.fnUntraced(function* (sessionToken: string) {
          if (!isAccessToken(sessionToken)) return yield* new Unauthenticated();
          const now = yield* Clock.currentTimeMillis;
          // Before a scope exists: the session's hash is the only thing that selects the organization.
          const [row] = yield* database.rows<SessionRow>(
            `select s.id, s.organization_id, s.link_id, s.form_secret, ${isoTimestamp("s.expires_at")} as expires_at, o.currency
             from developer_sessions s join organizations o on o.id = s.organization_id
             where s.token_hash = ? and s.ended_at is null and s.expires_at > ?::timestamptz`,
            [hashAccessToken(sessionToken), iso(now)],
          );
          if (row === undefined) return yield* new Unauthenticated();
          return {
            _tag: "DeveloperSession",
            scope: developerSessionScope(Number(row.organization_id), row.currency),
            sessionId: Number(row.id),
            linkId: Number(row.link_id),
            formSecret: row.form_secret,
            expiresAt: row.expires_at,
          };
        })),
        signOut: traced("DeveloperSessions.signOut")(Effect.fnUntraced(function* (session: DeveloperSession) {
          const now = yield* Clock.currentTimeMillis;
          const [row] = yield* orgSql(database, session.scope).update<{ id: string }>({
            table: "developer_sessions",
            as: "s",
            set: sql`ended_at = coalesce(s.ended_at, ${iso(now)}::timestamptz)`,
            where: sql`s.id = ${session.sessionId}`,
            returning: "s.id",
          });
          if (row === undefined) return yield* new NotFound();
        })),
      });
    }),
  );
}
