import {
  endpointOrigin, endpointSecretContext, endpointSwitched, envelopeBody, InvalidTransition, NotFound, type OrgScope, type NoticeKind, type SecretCipher, type SecretKeyUnavailable,
  type WebhookEventType, type WebhookMessage, type DatabaseUnavailable,
} from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { madeBeforeById } from "../history-partitions.ts";
import { WebhookEndpointEntity } from "../entities/index.ts";
import { isoTimestamp } from "../keyset-page.ts";
import { type Join, type OrgSql, orgSql, raw, sql } from "../org-sql.ts";
import { ENDED_DELIVERY, ENDED_DELIVERY_OF_DELETED } from "../webhooks/attempt-record.ts";
import { openOrUnavailable } from "../webhooks/opened-secrets.ts";
import { ATTEMPTS_OF_DELIVERY, type AttemptView, MESSAGE_OF_DELIVERY } from "./delivery.repository.ts";
import { recordTestMessage } from "./webhook-message.ts";

/**
 * An organization's webhook endpoints: register, list (with their health), enable/disable, reveal
 * and rotate the signing secret, send a test message and follow its delivery.
 */

/** What an endpoint's secret column holds between its insert and the sealing of its secret, in the same transaction. */
const UNSEALED = "";

/** Writes `secret` sealed for endpoint `id` (a new endpoint's, or a new listener's). */
export const sealEndpointSecret = (tx: OrgSql, secrets: SecretCipher, scope: OrgScope, id: number, secret: string) =>
  tx.update({
    table: "webhook_endpoints",
    as: "w",
    set: sql`secret = ${secrets.seal(secret, endpointSecretContext(scope.organizationId, id))}`,
    where: sql`w.id = ${id}`,
  });

/** An endpoint as its organization sees it (never its secret). */
export interface WebhookEndpointView {
  readonly id: number;
  readonly url: string;
  readonly event_types: string[];
  readonly enabled: boolean;
  readonly disabled_reason: string | null;
  readonly created_at: string;
  /** Its throttle: at most this many deliveries a second, or null for none. */
  readonly throttle_per_second: number | null;
  /** Its integrator's own words on what it is for; null when none was given. */
  readonly description: string | null;
  /** A local listener's (`platter listen`): the key that owns it, and whether a CLI is connected now. Null for an ordinary endpoint. */
  readonly listener: { readonly key_prefix: string; readonly connected: boolean } | null;
}

/** An endpoint's local-listener columns (`w`, its key `lk` joined), as `listener_key_prefix` and `listener_connected`. */
const LISTENER_COLUMNS = "lk.display_prefix as listener_key_prefix, coalesce(w.listening_until > now(), false) as listener_connected";
/** The key of endpoint `w`, when it is a local listener. */
const LISTENER_KEY: Join = { to: { table: "api_keys" }, as: "lk", on: "lk.id = w.listener_key_id", left: true };
const listenerOf = (row: { listener_key_prefix: string | null; listener_connected: boolean }) =>
  row.listener_key_prefix === null ? null : { key_prefix: row.listener_key_prefix, connected: row.listener_connected };

/**
 * The columns `setEnabled` writes: what `endpointSwitched(enabled, disabledReason)` decides, written
 * as it is (the run of failures starts over: failures, failure window, circuit and notice stage; the
 * reason only when disabling). Exported for the property test that checks it against the domain.
 */
export const switchedEndpoint = (enabled: boolean, disabledReason: string) => {
  const after = endpointSwitched(enabled, disabledReason);
  // A switch starts no run of failures and opens no circuit: those times are always cleared.
  return sql`enabled = ${after.enabled}, consecutive_failures = ${after.consecutiveFailures}::int, failing_since = null, circuit_open_until = null,
    notice_stage = ${after.noticed}::text, disabled_reason = ${after.disabledReason}::text`;
};

/** The deliveries (`d`) disabling an endpoint ends: its pending ones a dispatcher would send (a local listener's have their own expiry). */
const ENDED_DELIVERIES_OF = "d.status = 'pending' and not d.via_listener";

/** An endpoint (`w`) not deleted: every read and change by id sees only these, so a deleted one is `NotFound`. */
const NOT_DELETED = "w.deleted_at is null";

/** The reason a deleted endpoint's row keeps as `disabled_reason` (it is also disabled, so nothing is sent to it). */
export const DISABLED_BY_DELETION = "endpoint deleted";

/**
 * What deleting an endpoint writes to its row: deleted now, disabled (so every rule about disabled
 * endpoints holds for it too), both sealed secrets destroyed, and its run of failures and notice
 * stage cleared (its notices become ordinary history for retention). A local listener, whose stream
 * is leased, is never deleted (it goes with its key).
 */
const DELETED_ENDPOINT = sql`deleted_at = now(), enabled = false, disabled_reason = ${DISABLED_BY_DELETION}::text, secret = null,
  previous_secret = null, previous_secret_until = null, consecutive_failures = 0, failing_since = null, circuit_open_until = null,
  notice_stage = null`;

/** Why an endpoint was disabled by `setEnabled` when its caller does not say: the CLI's operator. */
export const DISABLED_BY_OPERATOR = "disabled by an operator";

/** An endpoint's editable settings as `lockForEdit` reads them, and whether it is a local listener (`platter listen`'s). */
export interface EndpointSettingsRow {
  readonly url: string;
  readonly event_types: ReadonlyArray<string>;
  readonly description: string | null;
  readonly enabled: boolean;
  readonly listener: boolean;
}

/** How an endpoint fared over the last 24 hours: its attempts, those answered 2xx, and the last one. */
export interface EndpointHealth {
  readonly attempts: number;
  readonly succeeded: number;
  readonly last_attempt_at: string | null;
  /** The last attempt's HTTP status, or null when it got none (see `last_error`). */
  readonly last_status_code: number | null;
  readonly last_error: string | null;
}

/** An endpoint with its health and, while its circuit is open, until when nothing is sent to it. */
export interface WebhookEndpointOverview extends WebhookEndpointView {
  readonly circuit_open_until: string | null;
  readonly health: EndpointHealth;
}

/** An endpoint's signing secret, and until when the secret before the last rotation still signs beside it. */
export interface EndpointSecret {
  readonly secret: string;
  readonly previous_secret_until: string | null;
}

/** One delivery to an endpoint as the test-event page follows it: its message, status and every attempt. */
export interface EndpointDelivery {
  readonly id: number;
  readonly envelope_id: string;
  readonly event_type: string;
  readonly status: "pending" | "succeeded" | "failed";
  readonly created_at: string;
  /** When the next try is due, while pending. */
  readonly next_attempt_at: string | null;
  /** The exact body sent (undefined for a stored message this code cannot read). */
  readonly body: string | undefined;
  readonly attempts: ReadonlyArray<AttemptView>;
}

/** An endpoint's row as the list reads it. */
interface ViewRow {
  id: string;
  url: string;
  event_types: string[];
  enabled: boolean;
  disabled_reason: string | null;
  created_at: string;
  throttle_per_second: number | null;
  description: string | null;
  listener_key_prefix: string | null;
  listener_connected: boolean;
}

const toView = (row: ViewRow): WebhookEndpointView => ({
  id: Number(row.id), url: row.url, event_types: row.event_types, enabled: row.enabled, disabled_reason: row.disabled_reason,
  created_at: row.created_at, description: row.description, throttle_per_second: row.throttle_per_second, listener: listenerOf(row),
});

interface OverviewRow extends ViewRow {
  circuit_open_until: string | null;
  attempts: number;
  succeeded: number;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
}

/**
 * Every endpoint with its health, in one statement: the scope's attempts of the last 24 hours (one
 * range of `webhook_attempts_health_idx`: OrgSql confines the derived table to the organization as
 * it does every select) grouped by endpoint, joined to the endpoints.
 */
const OVERVIEW_COLUMNS = `w.id, w.url, w.event_types, w.enabled, w.disabled_reason, ${isoTimestamp("w.created_at")} as created_at, w.description,
  w.throttle_per_second, ${LISTENER_COLUMNS},
  case when w.circuit_open_until > now() then ${isoTimestamp("w.circuit_open_until")} end as circuit_open_until,
  coalesce(h.attempts, 0) as attempts, coalesce(h.succeeded, 0) as succeeded,
  ${isoTimestamp("h.last_attempt_at")} as last_attempt_at, h.last_status_code, h.last_error`;
const HEALTH_JOIN: Join = {
  to: {
    select: {
      columns: `d.endpoint_id, count(*)::int as attempts,
        count(*) filter (where a.status_code between 200 and 299)::int as succeeded,
        max(a.started_at) as last_attempt_at,
        (array_agg(a.status_code order by a.started_at desc, a.id desc))[1] as last_status_code,
        (array_agg(a.error order by a.started_at desc, a.id desc))[1] as last_error`,
      from: "webhook_attempts",
      as: "a",
      joins: [{ to: { table: "webhook_deliveries" }, as: "d", on: "d.id = a.delivery_id and d.created_at = a.delivery_created_at" }],
      where: raw("a.started_at > now() - interval '24 hours'"),
      rest: raw("group by d.endpoint_id"),
    },
  },
  as: "h",
  on: "h.endpoint_id = w.id",
  left: true,
};

const toOverview = (row: OverviewRow): WebhookEndpointOverview => ({
  ...toView(row),
  circuit_open_until: row.circuit_open_until,
  health: {
    attempts: row.attempts,
    succeeded: row.succeeded,
    last_attempt_at: row.last_attempt_at,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
  },
});

const DELIVERY_COLUMNS = `d.id, m.envelope_id, m.type as event_type, d.status, ${isoTimestamp("d.created_at")} as created_at,
  case when d.status = 'pending' then ${isoTimestamp("d.next_attempt_at")} end as next_attempt_at,
  m.payload, ${isoTimestamp("m.created_at")} as message_created_at, attempts.list as attempts`;

/** An endpoint's active operational notice: the last one of its current run of failures (see `NoticeKind`). */
export interface EndpointNoticeView {
  readonly endpoint_id: number;
  readonly endpoint_url: string;
  readonly kind: NoticeKind;
  readonly reason: string;
  /** When it was written. */
  readonly at: string;
  /** For `disabling_soon`: when the failure window disables the endpoint unless a delivery succeeds. */
  readonly disables_at: string | null;
}

/** The endpoint's notice of its current stage (`notice_stage`, cleared by a success or by enabling it): its newest of that kind. */
const ACTIVE_NOTICE: Join = {
  to: {
    select: {
      columns: `n.kind, n.reason, ${isoTimestamp("n.created_at")} as at, ${isoTimestamp("n.disables_at")} as disables_at`,
      from: "endpoint_notices",
      as: "n",
      where: raw("n.endpoint_id = w.id and n.kind = w.notice_stage"),
      rest: raw("order by n.id desc limit 1"),
    },
    lateral: true,
  },
  as: "notice",
  on: "true",
};

export class WebhookEndpointRepository extends Context.Service<
  WebhookEndpointRepository,
  {
    /**
     * The organization's registered endpoints (local listeners left out; disabled ones in), oldest
     * first, with the organization's row locked until the transaction ends: registrations take turns,
     * so two cannot both take the last slot or the same URL. Called inside the registration's
     * transaction (`inOneTransaction`, the application's `WebhookEndpoints.register`, which decides).
     */
    readonly lockForRegistration: (scope: OrgScope) => Effect.Effect<ReadonlyArray<{ readonly id: number; readonly url: string }>, DatabaseUnavailable>;
    /**
     * Inserts an endpoint (its URL already checked and allowed) with `secret` sealed for its row,
     * and returns its id and that secret (shown this once). The limit and the one-endpoint-per-URL
     * rule are the caller's (`WebhookEndpoints.register`).
     */
    readonly add: (
      scope: OrgScope,
      url: string,
      eventTypes: ReadonlyArray<WebhookEventType>,
      secret: string,
    ) => Effect.Effect<{ readonly id: number; readonly secret: string }, DatabaseUnavailable>;
    readonly list: (scope: OrgScope) => Effect.Effect<ReadonlyArray<WebhookEndpointView>, DatabaseUnavailable>;
    /**
     * The endpoint's editable settings, its row locked until the transaction ends (so two edits take
     * turns, and each one's "before" is what it replaced), and whether it is a local listener. Called
     * inside an edit's transaction (the application's `WebhookEndpoints.edit`, which decides).
     */
    readonly lockForEdit: (scope: OrgScope, id: number) => Effect.Effect<EndpointSettingsRow, NotFound | DatabaseUnavailable>;
    /**
     * Writes the endpoint's URL (already checked and allowed; its origin follows, `endpointOrigin`),
     * event types and description. Deliveries not yet sent go to the new URL: a claim reads the
     * endpoint's URL and origin when it takes them.
     */
    readonly edit: (
      scope: OrgScope,
      id: number,
      settings: { readonly url: string; readonly eventTypes: ReadonlyArray<WebhookEventType>; readonly description: string | null },
    ) => Effect.Effect<void, NotFound | DatabaseUnavailable>;
    /** Every endpoint with its health over the last 24 hours and its open circuit, oldest first; one statement. */
    readonly overview: (scope: OrgScope) => Effect.Effect<ReadonlyArray<WebhookEndpointOverview>, DatabaseUnavailable>;
    /** Each endpoint's active operational notice (failing, about to be disabled, disabled), by endpoint id; endpoints without one are left out. */
    readonly activeNotices: (scope: OrgScope) => Effect.Effect<ReadonlyArray<EndpointNoticeView>, DatabaseUnavailable>;
    /** One endpoint as `overview` shows it; `NotFound` for another organization's. */
    readonly find: (scope: OrgScope, id: number) => Effect.Effect<WebhookEndpointOverview, NotFound | DatabaseUnavailable>;
    /**
     * The endpoint's signing secret (and whether the one before still signs): shown only when asked
     * for. `SecretKeyUnavailable` when it is sealed with a key this process does not hold.
     */
    readonly secret: (scope: OrgScope, id: number) => Effect.Effect<EndpointSecret, NotFound | SecretKeyUnavailable | DatabaseUnavailable>;
    /**
     * Enabling or disabling starts the endpoint's run of failures over (`endpointSwitched`: failures,
     * failure window, circuit and notice stage together), so a repaired endpoint gets a fresh start and
     * toggling it never makes the next single failure "start failing" again; disabling records why
     * (`disabledReason`, by default `DISABLED_BY_OPERATOR`) and ends its pending deliveries in the same
     * transaction (failed, `SETTLED_ENDPOINT_DISABLED`: shown in the log, replayable; `ended` counts
     * them). `changed` says whether it was the other way before.
     */
    readonly setEnabled: (
      scope: OrgScope,
      id: number,
      enabled: boolean,
      disabledReason?: string,
    ) => Effect.Effect<{ readonly id: number; readonly enabled: boolean; readonly changed: boolean; readonly ended: number }, NotFound | DatabaseUnavailable>;
    /**
     * Sets the endpoint's throttle (`perSecond` deliveries a second, null for none) and fills its
     * bucket; returns the throttle before, for the audit row (`changed`: whether it differs).
     */
    readonly setThrottle: (
      scope: OrgScope,
      id: number,
      perSecond: number | null,
    ) => Effect.Effect<{ readonly id: number; readonly before: number | null; readonly after: number | null; readonly changed: boolean }, NotFound | DatabaseUnavailable>;
    /**
     * Records `message` as a test and one delivery of it to this endpoint only (see
     * `recordTestMessage`); returns the delivery's id. A disabled endpoint sends nothing, so it is
     * `InvalidTransition`, and nothing is written.
     */
    readonly sendTestMessage: (
      scope: OrgScope,
      id: number,
      message: WebhookMessage,
    ) => Effect.Effect<{ readonly delivery_id: number }, NotFound | InvalidTransition | DatabaseUnavailable>;
    /**
     * Deletes endpoint `id` in one transaction, its row locked: the row is marked deleted and
     * disabled (`DELETED_ENDPOINT`: both sealed secrets destroyed), and its pending deliveries end
     * (failed, `SETTLED_ENDPOINT_DELETED`, their leases cleared, so a dispatcher's late result moves
     * nothing). Its history stays until retention; the sweep removes the row once nothing refers to it.
     * `NotFound` for one already deleted or another organization's; `InvalidTransition` for a local
     * listener (it goes with its API key). Returns its URL and how many deliveries it ended.
     */
    readonly delete: (
      scope: OrgScope,
      id: number,
    ) => Effect.Effect<{ readonly id: number; readonly url: string; readonly ended: number }, NotFound | InvalidTransition | DatabaseUnavailable>;
    /** A delivery to endpoint `endpointId` with its attempts; `NotFound` for any other. */
    readonly delivery: (scope: OrgScope, endpointId: number, deliveryId: number) => Effect.Effect<EndpointDelivery, NotFound | DatabaseUnavailable>;
    /**
     * Replaces the signing secret with `secret` (the domain's `generateSigningSecret`). Deliveries from now on are signed with the new one; the old one
     * keeps signing beside it (in `webhook-signature`) for `overlapMs`, so receivers can switch at leisure.
     * `SecretKeyUnavailable` (nothing written) when the current one is sealed with a key this process does not hold.
     */
    readonly rotateSecret: (
      scope: OrgScope,
      id: number,
      overlapMs: number,
      secret: string,
    ) => Effect.Effect<{ readonly id: number; readonly secret: string; readonly previous_secret_until: string }, NotFound | SecretKeyUnavailable | DatabaseUnavailable>;
  }
>()("platter/persistence/WebhookEndpointRepository") {
  static readonly layer = Layer.effect(
    WebhookEndpointRepository,
    Effect.gen(function* () {
      const database = yield* Database;
      return WebhookEndpointRepository.of({
        lockForRegistration: Effect.fnUntraced(function* (scope: OrgScope) {
          const tx = orgSql(database, scope);
          // The organization's row, locked until the commit, makes registrations take turns. `no key update`
          // leaves the foreign-key checks of other writes of the organization (`for key share`) unblocked.
          yield* tx.select({ columns: "o.id", from: "organizations", as: "o", rest: sql`for no key update` });
          const rows = yield* tx.select<{ id: string; url: string }>({
            columns: "w.id, w.url", from: "webhook_endpoints", as: "w", where: raw(`w.listener_key_id is null and ${NOT_DELETED}`), rest: sql`order by w.id`,
          });
          return rows.map((row) => ({ id: Number(row.id), url: row.url }));
        }),
        add: (scope: OrgScope, url: string, eventTypes: ReadonlyArray<WebhookEventType>, secret: string) =>
          orgSql(database, scope).transaction((tx) =>
            Effect.gen(function* () {
              // Sealed for its row, whose id the insert gives: written in clear nowhere, not even for a moment.
              const id = yield* tx.insert(WebhookEndpointEntity, { url, origin: endpointOrigin(url), secret: UNSEALED, eventTypes: [...eventTypes] });
              yield* sealEndpointSecret(tx, database.secrets, scope, id, secret);
              return { id, secret };
            })),
        list: Effect.fnUntraced(function* (scope: OrgScope) {
          const rows = yield* orgSql(database, scope).select<ViewRow>({
            columns: `w.id, w.url, w.event_types, w.enabled, w.disabled_reason, ${isoTimestamp("w.created_at")} as created_at, w.description,
              w.throttle_per_second, ${LISTENER_COLUMNS}`,
            from: "webhook_endpoints",
            as: "w",
            joins: [LISTENER_KEY],
            where: raw(NOT_DELETED),
            rest: sql`order by w.id`,
          });
          return rows.map(toView);
        }),
        lockForEdit: (scope: OrgScope, id: number) =>
          orgSql(database, scope).one<EndpointSettingsRow>({
            columns: "w.url, w.event_types, w.description, w.enabled, w.listener_key_id is not null as listener",
            from: "webhook_endpoints",
            as: "w",
            where: sql`w.id = ${id} and ${raw(NOT_DELETED)}`,
            rest: sql`for update`,
          }),
        edit: Effect.fnUntraced(function* (
          scope: OrgScope,
          id: number,
          settings: { readonly url: string; readonly eventTypes: ReadonlyArray<WebhookEventType>; readonly description: string | null },
        ) {
          const edited = yield* orgSql(database, scope).update({
            table: "webhook_endpoints",
            as: "w",
            set: sql`url = ${settings.url}, origin = ${endpointOrigin(settings.url)}, event_types = ${`{${settings.eventTypes.join(",")}}`}::text[],
              description = ${settings.description}::text`,
            where: sql`w.id = ${id}`,
            returning: "w.id",
          });
          if (edited.length === 0) return yield* new NotFound();
        }),
        overview: Effect.fnUntraced(function* (scope: OrgScope) {
          const rows = yield* orgSql(database, scope).select<OverviewRow>({
            columns: OVERVIEW_COLUMNS, from: "webhook_endpoints", as: "w", joins: [LISTENER_KEY, HEALTH_JOIN], where: raw(NOT_DELETED), rest: sql`order by w.id`,
          });
          return rows.map(toOverview);
        }),
        activeNotices: Effect.fnUntraced(function* (scope: OrgScope) {
          const rows = yield* orgSql(database, scope).select<Omit<EndpointNoticeView, "endpoint_id"> & { endpoint_id: string }>({
            columns: "w.id as endpoint_id, w.url as endpoint_url, notice.kind, notice.reason, notice.at, notice.disables_at",
            from: "webhook_endpoints",
            as: "w",
            joins: [ACTIVE_NOTICE],
            where: raw("w.notice_stage is not null"),
            rest: sql`order by w.id`,
          });
          return rows.map((row) => ({ ...row, endpoint_id: Number(row.endpoint_id) }));
        }),
        find: Effect.fnUntraced(function* (scope: OrgScope, id: number) {
          return toOverview(yield* orgSql(database, scope).one<OverviewRow>({
            columns: OVERVIEW_COLUMNS, from: "webhook_endpoints", as: "w", joins: [LISTENER_KEY, HEALTH_JOIN], where: sql`w.id = ${id} and ${raw(NOT_DELETED)}`,
          }));
        }),
        secret: Effect.fnUntraced(function* (scope: OrgScope, id: number) {
          const row = yield* orgSql(database, scope).one<EndpointSecret>({
            columns: `w.secret, case when w.previous_secret_until > now() then ${isoTimestamp("w.previous_secret_until")} end as previous_secret_until`,
            from: "webhook_endpoints",
            as: "w",
            where: sql`w.id = ${id} and ${raw(NOT_DELETED)}`,
          });
          // Sealed with a key this process lacks: `SecretKeyUnavailable`, as the claims skip such a row.
          const secret = yield* Effect.fromResult(openOrUnavailable(database.secrets, row.secret, endpointSecretContext(scope.organizationId, id)));
          return { ...row, secret };
        }),
        setEnabled: Effect.fnUntraced(function* (
          scope: OrgScope,
          id: number,
          enabled: boolean,
          disabledReason: string = DISABLED_BY_OPERATOR,
        ) {
          return yield* orgSql(database, scope).transaction((tx) =>
            Effect.gen(function* () {
              // Locked until the commit, so `changed` is true for exactly one of two concurrent calls.
              const before = yield* tx.one<{ enabled: boolean }>({
                columns: "w.enabled", from: "webhook_endpoints", as: "w", where: sql`w.id = ${id} and ${raw(NOT_DELETED)}`, rest: sql`for update`,
              });
              const changed = before.enabled !== enabled;
              // Only a real switch starts the run of failures over: enabling an enabled endpoint must not clear
              // its failures, circuit and notice stage (a click a day would keep a failing endpoint from ever being disabled).
              if (changed) yield* tx.update({ table: "webhook_endpoints", as: "w", set: switchedEndpoint(enabled, disabledReason), where: sql`w.id = ${id}` });
              // A disabled endpoint is sent nothing: its pending deliveries end now, so retention reaches their messages.
              const ended = enabled ? [] : yield* tx.update({
                table: "webhook_deliveries", as: "d", set: raw(ENDED_DELIVERY), where: sql`${raw(ENDED_DELIVERIES_OF)} and d.endpoint_id = ${id}`, returning: "d.id",
              });
              return { id, enabled, changed, ended: ended.length };
            }));
        }),
        setThrottle: Effect.fnUntraced(function* (scope: OrgScope, id: number, perSecond: number | null) {
          return yield* orgSql(database, scope).transaction((tx) =>
            Effect.gen(function* () {
              // Locked until the commit, so the throttle before is the one this change replaces.
              const before = yield* tx.one<{ throttle_per_second: number | null }>({
                columns: "w.throttle_per_second", from: "webhook_endpoints", as: "w", where: sql`w.id = ${id} and ${raw(NOT_DELETED)}`,
                rest: sql`for no key update`,
              });
              // A new throttle starts with a full bucket (no arrival time): the old one's debt is not carried over.
              yield* tx.update({
                table: "webhook_endpoints", as: "w", set: sql`throttle_per_second = ${perSecond}::int, throttle_next_at = null`, where: sql`w.id = ${id}`,
              });
              return { id, before: before.throttle_per_second, after: perSecond, changed: before.throttle_per_second !== perSecond };
            }));
        }),
        rotateSecret: Effect.fnUntraced(function* (scope: OrgScope, id: number, overlapMs: number, secret: string) {
          const context = endpointSecretContext(scope.organizationId, id);
          return yield* orgSql(database, scope).transaction((tx) =>
            Effect.gen(function* () {
              // The old secret keeps signing beside the new one: one this process cannot open (sealed with a key
              // it lacks) would leave the endpoint's deliveries unsent here through the overlap, so it is refused.
              const current = yield* tx.one<{ secret: string }>({
                columns: "w.secret", from: "webhook_endpoints", as: "w", where: sql`w.id = ${id} and ${raw(NOT_DELETED)}`, rest: sql`for update`,
              });
              yield* Effect.fromResult(openOrUnavailable(database.secrets, current.secret, context));
              // The overlap runs on the database's time, as the claims that choose the signing secrets read it.
              // The old secret moves as it is, sealed for this same row.
              const [row] = yield* tx.update<{ previous_secret_until: string }>({
                table: "webhook_endpoints",
                as: "w",
                set: sql`previous_secret = w.secret, previous_secret_until = now() + ${overlapMs}::bigint * interval '1 millisecond',
                  secret = ${database.secrets.seal(secret, context)}`,
                where: sql`w.id = ${id}`,
                returning: isoTimestamp("w.previous_secret_until") + " as previous_secret_until",
              });
              return { id, secret, previous_secret_until: row!.previous_secret_until };
            }));
        }),
        sendTestMessage: Effect.fnUntraced(function* (
          scope: OrgScope,
          id: number,
          message: WebhookMessage,
        ) {
          return yield* orgSql(database, scope).transaction((tx) =>
            Effect.gen(function* () {
              // Held until the commit: the endpoint cannot be disabled between the check and the delivery.
              const endpoint = yield* tx.one<{ enabled: boolean }>({
                columns: "w.enabled", from: "webhook_endpoints", as: "w", where: sql`w.id = ${id} and ${raw(NOT_DELETED)}`, rest: sql`for share`,
              });
              if (!endpoint.enabled) {
                return yield* new InvalidTransition({ message: "This endpoint is disabled: enable it to send it a test event." });
              }
              const deliveryId = yield* recordTestMessage(tx, message, id);
              if (deliveryId === undefined) return yield* new NotFound();
              return { delivery_id: deliveryId };
            }));
        }),
        delete: Effect.fnUntraced(function* (scope: OrgScope, id: number) {
          return yield* orgSql(database, scope).transaction((tx) =>
            Effect.gen(function* () {
              // Locked until the commit: a concurrent delete, switch or test event waits, then finds it deleted.
              const endpoint = yield* tx.one<{ url: string; listener_key_id: string | null }>({
                columns: "w.url, w.listener_key_id", from: "webhook_endpoints", as: "w", where: sql`w.id = ${id} and ${raw(NOT_DELETED)}`, rest: sql`for update`,
              });
              if (endpoint.listener_key_id !== null) {
                return yield* new InvalidTransition({ message: "This is a local listener of `platter listen`: it goes with its API key." });
              }
              yield* tx.update({ table: "webhook_endpoints", as: "w", set: DELETED_ENDPOINT, where: sql`w.id = ${id}` });
              const ended = yield* tx.update({
                table: "webhook_deliveries", as: "d", set: raw(ENDED_DELIVERY_OF_DELETED), where: sql`${raw(ENDED_DELIVERIES_OF)} and d.endpoint_id = ${id}`, returning: "d.id",
              });
              return { id, url: endpoint.url, ended: ended.length };
            }));
        }),
        delivery: Effect.fnUntraced(function* (scope: OrgScope, endpointId: number, deliveryId: number) {
          const row = yield* orgSql(database, scope).one<Omit<EndpointDelivery, "id" | "body"> & { id: string; payload: unknown; message_created_at: string }>({
            columns: DELIVERY_COLUMNS,
            from: "webhook_deliveries",
            as: "d",
            joins: [MESSAGE_OF_DELIVERY, ATTEMPTS_OF_DELIVERY],
            // Newest first from the latest time it may have: about one partition read (`madeBeforeById`).
            where: sql`d.id = ${deliveryId} and d.created_at < ${madeBeforeById("webhook_deliveries", deliveryId)} and d.endpoint_id = ${endpointId}`,
            rest: raw("order by d.created_at desc limit 1"),
          });
          const { payload, message_created_at, ...delivery } = row;
          return {
            ...delivery,
            id: Number(row.id),
            body: envelopeBody({ envelopeId: row.envelope_id, type: row.event_type, createdAt: message_created_at, payload }),
          };
        }),
      });
    }),
  );
}
