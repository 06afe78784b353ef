import {
  ATTEMPT_TEXT_MAX_CHARACTERS, deliveryAfterAttempt, envelopeBody, type InvalidTransition, leaseLost, LISTENER_BACKLOG_EXPIRED, LISTENER_BACKLOG_MS,
  LISTENER_IN_FLIGHT, generateSigningSecret, type ListenerReport, type ListenRequest, type OrgScope, endpointOrigin, endpointSecretContext, type SecretKeyUnavailable,
  storableTextOrNull, tooManyListeners,
  UNREADABLE_MESSAGE, type DatabaseUnavailable,
} from "@platter/domain";
import { Context, Effect, Layer, Result } from "effect";
import { Database } from "../database.ts";
import { WebhookEndpointEntity } from "../entities/index.ts";
import { isoTimestamp } from "../keyset-page.ts";
import { type OrgSql, orgSql, raw, sql, type Statement, type Update } from "../org-sql.ts";
import { sealEndpointSecret } from "../repositories/webhook-endpoint.repository.ts";
import { CLEAR_LEASE, endLeaseNow, heldByToken, leased, leaseUntilFor, STREAM_LEASE, takeLeaseFor, unleased } from "./lease.ts";
import { openEndpointSecrets, openedSecrets, openOrUnavailable } from "./opened-secrets.ts";
import { bigintArray } from "./delivery-claim.ts";

/**
 * Local listeners (`platter listen`): each API key's one endpoint whose deliveries a connected CLI
 * forwards to a URL on its own machine. Its deliveries are written with everyone else's
 * (`recordMessage`, marked `via_listener`) while it listens, never claimed by a dispatcher; the
 * Developer area's stream claims them here, signed with the listener's secret, and records each
 * forward's answer as the attempt. Everything is reached through the key's scope: a key sees only
 * its own listener, in its own organization.
 */

/** A listener as its stream holds it: its endpoint, the secret its deliveries are signed with, and the stream's token. */
export interface OpenedListener {
  readonly id: number;
  readonly secret: string;
  /** This stream's token: another `platter listen` with the key replaces it, and then this one's renewals fail. */
  readonly stream: string;
  /** Whether the key had no listener before (its endpoint was made now). */
  readonly created: boolean;
  /** Whether another stream of the key was connected and this one took over from it. */
  readonly tookOver: boolean;
}

/** A delivery handed to a listener's stream, with what signing it needs. */
export interface ListenerDelivery {
  readonly id: number;
  readonly attempt: number;
  readonly leaseToken: string;
  readonly envelopeId: string;
  readonly type: string;
  /** The exact bytes to forward. */
  readonly body: string;
  readonly secret: string;
  /** The secret before a rotation, while its overlap lasts (it signs beside `secret`). */
  readonly previousSecret: string | undefined;
}

/** A listener's deliveries (`due`) that may be handed out now: pending, due, and held by no stream (the listeners' due index). */
const HANDABLE = `due.status = 'pending' and due.via_listener and due.next_attempt_at <= now() and ${unleased("due")}`;

/** The key's listener, `w`: a key has at most one. */
const keyListener = (scope: OrgScope) => sql`w.listener_key_id = ${scope.apiKeyId}`;

/** Listener `w`'s key still works (not revoked, not expired): a revoked key's stream gets nothing more. */
const KEY_LIVE = `exists (select 1 from api_keys k where k.id = w.listener_key_id and k.revoked_at is null
  and (k.expires_at is null or k.expires_at > now()))`;

/** What a stream's renewal found: still its listener's, taken over by another stream, or its key revoked or expired. */
export type ListenerRenewal = "renewed" | "replaced" | "key_ended";

/** What claiming reads of each delivery claimed: its message and its endpoint's secrets. */
interface ClaimedRow {
  id: string;
  envelope_id: string;
  type: string;
  created_at: string;
  payload: unknown;
  secret: string;
  previous_secret: string | null;
}

/**
 * The listener claim (an update `OrgSql` confines to the key's organization): the listener's due
 * deliveries nobody holds, oldest first, up to its free share of `LISTENER_IN_FLIGHT`, leased to the
 * stream for `leaseMs`, only while this stream is its listener and its key works. Its full text as
 * PostgreSQL runs it: `test/__snapshots__/statements/listener-claim.sql`.
 */
export const listenerClaim = (scope: OrgScope, listener: OpenedListener, leaseMs: number): Update => ({
  table: "webhook_deliveries",
  as: "d",
  set: takeLeaseFor(leaseMs),
  where: sql`d.id in (
    -- The listener's deliveries that may be handed out now, oldest first, skipping rows another claim holds.
    select due.id from webhook_deliveries due
    where due.endpoint_id = ${listener.id} and ${raw(HANDABLE)}
      -- Only while this stream holds the listener and its key works.
      and exists (select 1 from webhook_endpoints w where w.id = due.endpoint_id and ${keyListener(scope)}
        and ${heldByToken("w", listener.stream, STREAM_LEASE)} and ${raw(KEY_LIVE)})
    order by due.next_attempt_at, due.id
    -- Up to its free share: LISTENER_IN_FLIGHT less the deliveries it holds now.
    limit greatest(0, ${LISTENER_IN_FLIGHT}::int - (select count(*)::int from webhook_deliveries in_flight
      where in_flight.endpoint_id = ${listener.id} and in_flight.status = 'pending' and in_flight.via_listener and ${raw(leased("in_flight"))}))
    for update skip locked)`,
  returning: "d.id, d.attempts + 1 as attempt, d.lease_token",
});

/**
 * Gives up a listener's pending deliveries matching `where` (`d`) for good, each with an attempt
 * whose error says why: in `tx`, both statements together.
 */
const giveUp = (tx: OrgSql, where: Statement, reason: string) =>
  Effect.gen(function* () {
    const given = sql`${where} and d.status = 'pending' and d.via_listener`;
    yield* tx.insertFrom({
      into: "webhook_attempts",
      columns: "delivery_id, delivery_created_at, attempt, started_at, duration_ms, error",
      values: sql`d.id, d.created_at, d.attempts + 1, now(), 0, ${reason}`,
      from: "webhook_deliveries",
      as: "d",
      where: given,
    });
    yield* tx.update({
      table: "webhook_deliveries",
      as: "d",
      set: sql`status = 'failed', attempts = d.attempts + 1, completed_at = now(), ${raw(CLEAR_LEASE)}`,
      where: given,
    });
  });

export class LocalListeners extends Context.Service<
  LocalListeners,
  {
    /**
     * Opens the key's listener for a stream (made on first use, with a signing secret of its own):
     * it forwards to `request.forwardTo` the types asked for, and gets new deliveries for `leaseMs`
     * unless renewed. A stream already open with the key is replaced. Deliveries that waited past
     * `LISTENER_BACKLOG_MS` are given up. `InvalidTransition` (nothing written) when the
     * organization already has `limit` other listeners connected; `SecretKeyUnavailable` (nothing
     * written) when its secret is sealed with a key this process does not hold.
     */
    readonly open: (
      scope: OrgScope, request: ListenRequest, leaseMs: number, limit: number,
    ) => Effect.Effect<OpenedListener, InvalidTransition | SecretKeyUnavailable | DatabaseUnavailable>;
    /** Keeps the stream's listener getting deliveries for `leaseMs` more, unless another stream replaced it or its key stopped working. */
    readonly renew: (scope: OrgScope, listener: OpenedListener, leaseMs: number) => Effect.Effect<ListenerRenewal, DatabaseUnavailable>;
    /** The stream ended: the listener gets no new deliveries (those it has keep their places for its return). */
    readonly close: (scope: OrgScope, listener: OpenedListener) => Effect.Effect<void, DatabaseUnavailable>;
    /**
     * Up to the listener's free share of `LISTENER_IN_FLIGHT`, its due deliveries, oldest first,
     * leased to the stream for `leaseMs`; none when another stream replaced it.
     */
    readonly claim: (scope: OrgScope, listener: OpenedListener, leaseMs: number) => Effect.Effect<ReadonlyArray<ListenerDelivery>, DatabaseUnavailable>;
    /**
     * Records a forward's answer as the delivery's attempt, the delivery moved as
     * `deliveryAfterAttempt` says with no retries (a listener's deliveries are tried once; replay one
     * to send it again). `InvalidTransition` (`leaseLost`) unless the key's listener holds its lease.
     */
    readonly record: (scope: OrgScope, report: ListenerReport) => Effect.Effect<{ readonly status: "succeeded" | "failed" }, InvalidTransition | DatabaseUnavailable>;
  }
>()("platter/persistence/LocalListeners") {
  static readonly layer = Layer.effect(
    LocalListeners,
    Effect.gen(function* () {
      const database = yield* Database;
      // Each claim reads the listener's sealed secrets with every delivery: opened once per value.
      const secrets = openedSecrets(database.secrets, 1_000);
      return LocalListeners.of({
        open: Effect.fnUntraced(function* (scope: OrgScope, request: ListenRequest, leaseMs: number, limit: number) {
          return yield* orgSql(database, scope).transaction((tx) =>
            Effect.gen(function* () {
              // The organization's row makes opens take turns, so two cannot both take the last place.
              yield* tx.select({ columns: "o.id", from: "organizations", as: "o", rest: sql`for no key update` });
              const [others] = yield* tx.select<{ n: number }>({
                columns: "count(*)::int as n", from: "webhook_endpoints", as: "w",
                where: sql`w.listener_key_id is not null and w.listener_key_id <> ${scope.apiKeyId} and w.listening_until > now()`,
              });
              if ((others?.n ?? 0) >= limit) return yield* Effect.fail(tooManyListeners(limit));
              const [existing] = yield* tx.select<{ id: string; connected: boolean }>({
                columns: "w.id, coalesce(w.listener_stream is not null and w.listening_until > now(), false) as connected",
                from: "webhook_endpoints", as: "w", where: keyListener(scope), rest: sql`for update`,
              });
              const id = existing === undefined
                ? yield* tx.insert(WebhookEndpointEntity, {
                  url: request.forwardTo, origin: endpointOrigin(request.forwardTo), secret: "",
                  eventTypes: [...request.eventTypes], listenerKey: scope.apiKeyId,
                })
                : Number(existing.id);
              // A new listener's secret, sealed for its row in the insert's transaction (never in clear).
              if (existing === undefined) yield* sealEndpointSecret(tx, database.secrets, scope, id, generateSigningSecret());
              const [opened] = yield* tx.update<{ secret: string; listener_stream: string }>({
                table: "webhook_endpoints",
                as: "w",
                set: sql`url = ${request.forwardTo}, origin = ${endpointOrigin(request.forwardTo)}, event_types = ${`{${request.eventTypes.join(",")}}`}::text[],
                  enabled = true, disabled_reason = null, ${takeLeaseFor(leaseMs, STREAM_LEASE)}`,
                where: sql`w.id = ${id} and ${keyListener(scope)}`,
                returning: "w.secret, w.listener_stream",
              });
              // The CLI was away: what waited past the backlog is not forwarded any more.
              yield* giveUp(tx, sql`d.endpoint_id = ${id} and d.created_at < now() - ${LISTENER_BACKLOG_MS}::bigint * interval '1 millisecond'
                and ${raw(unleased("d"))}`, LISTENER_BACKLOG_EXPIRED);
              // Sealed with a key this process lacks: this listener's open fails (`SecretKeyUnavailable`, nothing
              // kept: the transaction rolls back), as the dispatcher's claim skips such a row; other listeners are untouched.
              const secret = yield* Effect.fromResult(openOrUnavailable(secrets, opened!.secret, endpointSecretContext(scope.organizationId, id)));
              return { id, secret, stream: opened!.listener_stream, created: existing === undefined, tookOver: existing?.connected === true };
            }));
        }),
        renew: Effect.fnUntraced(function* (scope: OrgScope, listener: OpenedListener, leaseMs: number) {
          const org = orgSql(database, scope);
          const [renewed] = yield* org.update<{ key_live: boolean }>({
            table: "webhook_endpoints",
            as: "w",
            // A revoked or expired key's stream gets its lease ended now instead.
            set: sql`listening_until = case when ${raw(KEY_LIVE)} then ${leaseUntilFor(leaseMs)} else now() end`,
            where: sql`w.id = ${listener.id} and ${keyListener(scope)} and ${heldByToken("w", listener.stream, STREAM_LEASE)}`,
            returning: `${KEY_LIVE} as key_live`,
          });
          return renewed === undefined ? "replaced" : renewed.key_live ? "renewed" : "key_ended";
        }),
        close: Effect.fnUntraced(function* (scope: OrgScope, listener: OpenedListener) {
          yield* orgSql(database, scope).update({
            table: "webhook_endpoints",
            as: "w",
            set: raw(endLeaseNow(STREAM_LEASE)),
            where: sql`w.id = ${listener.id} and ${keyListener(scope)} and ${heldByToken("w", listener.stream, STREAM_LEASE)}`,
          });
        }),
        claim: Effect.fnUntraced(function* (scope: OrgScope, listener: OpenedListener, leaseMs: number) {
          const org = orgSql(database, scope);
          const claimed = yield* org.update<{ id: string; attempt: number; lease_token: string }>(listenerClaim(scope, listener, leaseMs));
          if (claimed.length === 0) return [];
          const rows = yield* org.select<ClaimedRow>({
            columns: `d.id, m.envelope_id, m.type, ${isoTimestamp("m.created_at")} as created_at, m.payload, w.secret,
              case when w.previous_secret_until > now() then w.previous_secret end as previous_secret`,
            from: "webhook_deliveries",
            as: "d",
            joins: [
              { to: { table: "webhook_messages" }, as: "m", on: "m.id = d.message_id and m.created_at = d.created_at" },
              { to: { table: "webhook_endpoints" }, as: "w", on: "w.id = d.endpoint_id" },
            ],
            where: sql`d.id = any(${bigintArray(claimed.map((row) => row.id))}::bigint[])`,
          });
          const byId = new Map(rows.map((row) => [row.id, row]));
          const context = endpointSecretContext(scope.organizationId, listener.id);
          const handed: ListenerDelivery[] = [];
          const unreadable: string[] = [];
          for (const lease of claimed) {
            const row = byId.get(lease.id)!;
            // As the dispatcher's claim: secrets sealed with a key this process lacks leave the delivery leased and
            // unsent (handed out again when its lease ends, by a process holding the key).
            const opened = openEndpointSecrets(secrets, row, context);
            if (Result.isFailure(opened)) continue;
            const body = envelopeBody({ envelopeId: row.envelope_id, type: row.type, createdAt: row.created_at, payload: row.payload });
            if (body === undefined) unreadable.push(lease.id);
            else {
              handed.push({
                id: Number(lease.id), attempt: lease.attempt, leaseToken: lease.lease_token, envelopeId: row.envelope_id, type: row.type, body,
                secret: opened.success.secret, previousSecret: opened.success.previousSecret,
              });
            }
          }
          // A message that no longer reads as its type is failed at once, as a dispatcher fails it (nothing is sent).
          if (unreadable.length > 0) {
            // Just leased by this claim: these ids are this stream's.
            yield* org.transaction((tx) => giveUp(tx, sql`d.id = any(${bigintArray(unreadable)}::bigint[])`, UNREADABLE_MESSAGE));
          }
          return handed;
        }),
        record: Effect.fnUntraced(function* (scope: OrgScope, report: ListenerReport) {
          return yield* orgSql(database, scope).transaction((tx) =>
            Effect.gen(function* () {
              const held = sql`d.id = ${report.deliveryId} and ${heldByToken("d", report.leaseToken)} and d.status = 'pending'
                and d.endpoint_id in (select w.id from webhook_endpoints w where ${keyListener(scope)})`;
              // No retry schedule: the answer settles it (see `listenerOutcome`).
              const after = deliveryAfterAttempt(1, report.outcome, [], 0);
              const recorded = yield* tx.insertFrom({
                into: "webhook_attempts",
                columns: "delivery_id, delivery_created_at, attempt, started_at, duration_ms, status_code, error, response_body",
                values: sql`d.id, d.created_at, d.attempts + 1, now() - ${report.durationMs}::int * interval '1 millisecond', ${report.durationMs}::int,
                  ${report.statusCode ?? null}::int, ${storableTextOrNull(report.error, ATTEMPT_TEXT_MAX_CHARACTERS)},
                  ${storableTextOrNull(report.responseBody, ATTEMPT_TEXT_MAX_CHARACTERS)}`,
                from: "webhook_deliveries",
                as: "d",
                where: held,
              });
              if (recorded === 0) return yield* Effect.fail(leaseLost());
              yield* tx.update({
                table: "webhook_deliveries",
                as: "d",
                set: sql`status = ${after.status}, attempts = d.attempts + 1, completed_at = now(), ${raw(CLEAR_LEASE)}`,
                where: held,
              });
              return { status: after.status === "succeeded" ? "succeeded" as const : "failed" as const };
            }));
        }),
      });
    }),
  );
}
