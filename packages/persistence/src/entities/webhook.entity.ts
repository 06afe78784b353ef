import { defineEntity, p } from "@mikro-orm/postgresql";
import { identityId } from "./columns.ts";
import { ApiKeyEntity, OrganizationEntity } from "./organization.entity.ts";

/**
 * The webhook side: messages, endpoints, one delivery per (endpoint, message), and every attempt
 * made. A message's deliveries are created in the transaction that records it; the body each try
 * sends is rendered from the stored message, so every retry sends the same bytes.
 */

export const WebhookMessageEntity = defineEntity({
  name: "WebhookMessage",
  tableName: "webhook_messages",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    /** The envelope `id` integrators see; stable across every retry. */
    envelopeId: p.text().defaultRaw("('evt_'::text || replace((gen_random_uuid())::text, '-'::text, ''::text))"),
    type: p.text(),
    /** The versioned payload written through the domain's message schema. */
    payload: p.json<unknown>(),
    /** Its partition key too (the table is partitioned by it: `HistoryPartitions`), so part of the primary key. */
    createdAt: p.datetime(3).defaultRaw("now()").primary(),
    /** The creating request's W3C `traceparent` (null when nothing traced it): each attempt's span is its child. */
    traceparent: p.text().nullable(),
  },
  // Random, so unique alone; a partitioned table's unique must hold its partition key (Migration20261202000000HistoryByTime).
  uniques: [{ name: "webhook_messages_envelope_id_created_at_key", properties: ["envelopeId", "createdAt"] }],
  checks: [
    { name: "webhook_messages_traceparent_check", expression: "traceparent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'" },
  ],
  indexes: [
    // The message feed: an organization's messages oldest first, from a cursor.
    { name: "webhook_messages_feed_idx", properties: ["organization", "createdAt", "id"] },
  ],
});

export const WebhookEndpointEntity = defineEntity({
  name: "WebhookEndpoint",
  tableName: "webhook_endpoints",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    url: p.text(),
    /** `endpointOrigin(url)`: attempts in flight are counted per origin, as the HTTP client pools connections. */
    origin: p.text(),
    /** The signing secret, sealed; null once the endpoint is deleted (`webhook_endpoints_secret_check`). */
    secret: p.text().nullable(),
    /** The secret before the last rotation: it keeps signing beside `secret` until `previousSecretUntil`. */
    previousSecret: p.text().nullable(),
    previousSecretUntil: p.datetime(3).nullable(),
    eventTypes: p.array().columnType("text[]").defaultRaw("'{}'"),
    enabled: p.boolean().default(true),
    disabledReason: p.text().nullable(),
    failingSince: p.datetime(3).nullable(),
    /** Failed attempts in a row; at the circuit threshold the endpoint's circuit opens. */
    consecutiveFailures: p.integer().default(0),
    /** While in the future the circuit is open (nothing is sent); once past, one probe at a time. */
    circuitOpenUntil: p.datetime(3).nullable(),
    createdAt: p.datetime(3).defaultRaw("now()"),
    /** The last operational notice of its run of failures (`failing`, `disabling_soon`, `disabled`); null once a delivery succeeds or it is enabled. */
    noticeStage: p.text().nullable(),
    /** Set for a local listener (`platter listen`): the API key that owns it; its URL is where the CLI forwards. */
    listenerKey: p.manyToOne(ApiKeyEntity).nullable().deleteRule("no action"),
    /** A listener gets new deliveries while this is in the future (a connected stream renews it). */
    listeningUntil: p.datetime(3).nullable(),
    /** The connected stream's token: a second `platter listen` with the key takes over, and the first one's renewals fail. */
    listenerStream: p.uuid().nullable(),
    /** The organization's throttle: at most this many deliveries a second across every dispatcher; null for none. */
    throttlePerSecond: p.integer().nullable(),
    /** The throttle's token bucket: its theoretical arrival time, advanced by the claim one interval per delivery it leases. */
    throttleNextAt: p.datetime(3).nullable(),
    /** Its integrator's own words on what it is for (at most 500 characters, `ENDPOINT_DESCRIPTION_MAX_CHARACTERS`). */
    description: p.text().nullable(),
    /** When it was deleted: its secrets are destroyed, it gets nothing more, and the retention sweep removes it once no history refers to it. */
    deletedAt: p.datetime(3).nullable(),
  },
  indexes: [
    { name: "webhook_endpoints_organization_idx", properties: ["organization", "id"] },
    { name: "webhook_endpoints_deleted_idx", properties: ["deletedAt", "id"], where: { deletedAt: { $ne: null } } },
    { name: "webhook_endpoints_listener_key_idx", expression: "create unique index webhook_endpoints_listener_key_idx on webhook_endpoints (listener_key_id) where listener_key_id is not null" },
  ],
  checks: [
    { name: "webhook_endpoints_notice_stage_check", expression: "notice_stage in ('failing', 'disabling_soon', 'disabled')" },
    { name: "webhook_endpoints_throttle_per_second_check", expression: "throttle_per_second >= 1 and throttle_per_second <= 1000" },
    { name: "webhook_endpoints_description_check", expression: "char_length(description) <= 500" },
    { name: "webhook_endpoints_secret_check", expression: "secret is not null or deleted_at is not null" },
  ],
});

/**
 * An operational notice (an endpoint started failing, is about to be disabled, was disabled),
 * written in the transaction that records the attempts causing it; also the operator channel's
 * outbox row: its delivery to `OPERATOR_WEBHOOK_URL` is kept beside it.
 */
export const EndpointNoticeEntity = defineEntity({
  name: "EndpointNotice",
  tableName: "endpoint_notices",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    endpoint: p.manyToOne(WebhookEndpointEntity),
    /** The operational webhook's envelope id; the same on every retry. */
    envelopeId: p.text().unique().defaultRaw("('ntc_'::text || replace((gen_random_uuid())::text, '-'::text, ''::text))"),
    kind: p.text(),
    reason: p.text(),
    /** The endpoint's URL when the notice was written. */
    endpointUrl: p.text(),
    createdAt: p.datetime(3).defaultRaw("now()"),
    /** For `disabling_soon`: when the failure window ends. */
    disablesAt: p.datetime(3).nullable(),
    /** The operator webhook's delivery: `pending`, `succeeded`, `failed`, or `unsent` (no operator URL configured). */
    operatorStatus: p.text(),
    operatorAttempts: p.integer().default(0),
    operatorNextAttemptAt: p.datetime(3).defaultRaw("now()"),
    leaseToken: p.uuid().nullable(),
    leaseExpiresAt: p.datetime(3).nullable(),
    operatorStatusCode: p.integer().nullable(),
    operatorError: p.text().nullable(),
    operatorCompletedAt: p.datetime(3).nullable(),
    /** Whether its alert e-mails (`alert_mails`) are written yet: `pending`, then `done`. */
    mailStatus: p.text().default("pending"),
  },
  indexes: [
    { name: "endpoint_notices_endpoint_idx", properties: ["organization", "endpoint", "id"] },
    { name: "endpoint_notices_due_idx", properties: ["operatorNextAttemptAt", "id"], where: { operatorStatus: "pending" } },
    { name: "endpoint_notices_mail_idx", properties: ["id"], where: { mailStatus: "pending" } },
    // The operator channel's claim walks organizations with pending notices on it.
    { name: "endpoint_notices_operator_due_idx", properties: ["organization", "operatorNextAttemptAt", "id"], where: { operatorStatus: "pending" } },
  ],
  // Wakes the dispatchers' alert mailers (LISTEN platter_notices) as soon as notices commit.
  triggers: [
    { name: "endpoint_notices_notify", timing: "after", events: ["insert"], forEach: "row", body: "perform pg_notify('platter_notices', ''); return null;" },
  ],
  checks: [
    { name: "endpoint_notices_kind_check", expression: "kind in ('failing', 'disabling_soon', 'disabled', 'recovered')" },
    { name: "endpoint_notices_mail_status_check", expression: "mail_status in ('pending', 'done')" },
    { name: "endpoint_notices_operator_status_check", expression: "operator_status in ('pending', 'succeeded', 'failed', 'unsent')" },
  ],
});

export const WebhookDeliveryEntity = defineEntity({
  name: "WebhookDelivery",
  tableName: "webhook_deliveries",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    endpoint: p.manyToOne(WebhookEndpointEntity),
    /** Its message's id; no foreign key: the message's partition (same bounds, `created_at` equal) goes with this one's. */
    messageId: p.bigint("number"),
    status: p.text().default("pending"),
    attempts: p.integer().default(0),
    nextAttemptAt: p.datetime(3).defaultRaw("now()"),
    /** Set while a dispatcher attempts it, until `leaseExpiresAt`; neither is indexed, so a claim is a HOT update. */
    leaseToken: p.uuid().nullable(),
    leaseExpiresAt: p.datetime(3).nullable(),
    /** Its message's `created_at` (written in the message's transaction) and its partition key, so part of the primary key. */
    createdAt: p.datetime(3).defaultRaw("now()").primary(),
    completedAt: p.datetime(3).nullable(),
    /** Its endpoint is a local listener: forwarded by `platter listen`, never sent by a dispatcher. */
    viaListener: p.boolean().default(false),
    /** Why it ended without its attempts deciding it (`SETTLED_ENDPOINT_DISABLED`); null otherwise, and after a replay. */
    settledReason: p.text().nullable(),
  },
  // Leads with the message: it also finds a message's deliveries (history retention).
  uniques: [{ name: "webhook_deliveries_message_id_endpoint_id_created_at_key", properties: ["messageId", "endpoint", "createdAt"] }],
  indexes: [
    // Partial: only the deliveries still pending, organization by organization, then endpoint by
    // endpoint (claims walk both, and take each endpoint's oldest due).
    // (A listener's deliveries are left out: the dispatcher never sends them; they have their own index.)
    {
      name: "webhook_deliveries_due_idx",
      expression: "create index webhook_deliveries_due_idx on webhook_deliveries (organization_id, endpoint_id, next_attempt_at, id) where status = 'pending' and not via_listener",
    },
    {
      name: "webhook_deliveries_listener_due_idx",
      expression: "create index webhook_deliveries_listener_due_idx on webhook_deliveries (endpoint_id, next_attempt_at, id) where status = 'pending' and via_listener",
    },
    // The delivery log, newest first and bounded by time: the organization's, and an endpoint's.
    { name: "webhook_deliveries_log_idx", properties: ["organization", "createdAt", "id"] },
    { name: "webhook_deliveries_endpoint_log_idx", properties: ["endpoint", "createdAt", "id"] },
    // Partial: an endpoint's failed deliveries since a time (the log filtered to failed; replaying them).
    { name: "webhook_deliveries_failed_idx", properties: ["endpoint", "createdAt", "id"], where: { status: "failed" } },
    // (Retention drops whole partitions. Each partition's fillfactor 50, for HOT claims, is set where it is made: `HistoryPartitions`.)
  ],
  // No trigger NOTIFYs: the writer wakes the dispatchers after its commit (`DELIVERIES_NOTIFY`).
  checks: [{ name: "webhook_deliveries_status_check", expression: "status in ('pending', 'succeeded', 'failed')" }],
});

export const WebhookAttemptEntity = defineEntity({
  name: "WebhookAttempt",
  tableName: "webhook_attempts",
  properties: {
    /**
     * Its delivery, the primary key's first column: attempts are read by their delivery only, so the key serves
     * those reads and no second index is written per attempt (Migration20261204040000AttemptKeyLeadsWithDelivery).
     */
    deliveryId: p.bigint("number").primary(),
    id: identityId(),
    // No foreign keys: an append-only log written only by the dispatcher (see Migration20261124060000AttemptLogKeys).
    organization: p.manyToOne(OrganizationEntity).createForeignKeyConstraint(false),
    /** Its delivery's `created_at`: the partition key, so an attempt's partition goes with its delivery's (`HistoryPartitions`). */
    deliveryCreatedAt: p.datetime(3).primary(),
    attempt: p.integer(),
    startedAt: p.datetime(3),
    durationMs: p.integer(),
    statusCode: p.integer().nullable(),
    error: p.text().nullable(),
    responseBody: p.text().nullable(),
    nextAttemptAt: p.datetime(3).nullable(),
  },
  indexes: [
    // Endpoint health: an organization's attempts of the last 24 hours.
    { name: "webhook_attempts_health_idx", properties: ["organization", "startedAt"] },
  ],
});
