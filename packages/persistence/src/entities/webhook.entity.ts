import { defineEntity, p } from "@mikro-orm/postgresql";
import { identityId } from "./columns.ts";
import { OrganizationEntity } from "./organization.entity.ts";

/**
 * The webhook side: messages (the transactional outbox), endpoints, one delivery per (endpoint,
 * message), and every attempt made. A delivery's body is fixed at fan-out, so every retry sends
 * the same bytes.
 */

export const WebhookMessageEntity = defineEntity({
  name: "WebhookMessage",
  tableName: "webhook_messages",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    /** The envelope `id` integrators see; stable across every retry. */
    envelopeId: p.text().unique().defaultRaw("('evt_'::text || replace((gen_random_uuid())::text, '-'::text, ''::text))"),
    type: p.text(),
    /** The versioned payload written through the domain's message schema. */
    payload: p.json<unknown>(),
    createdAt: p.datetime(3).defaultRaw("now()"),
    fannedOutAt: p.datetime(3).nullable(),
  },
  // Partial: only the messages not yet fanned out.
  indexes: [
    { name: "webhook_messages_pending_idx", properties: ["id"], where: { fannedOutAt: null } },
    // Retention: fanned-out messages, oldest first.
    { name: "webhook_messages_fanned_out_idx", properties: ["fannedOutAt"], where: { fannedOutAt: { $ne: null } } },
  ],
  // Wakes dispatchers (LISTEN platter_outbox) as soon as a message commits.
  triggers: [
    { name: "webhook_messages_notify", timing: "after", events: ["insert"], forEach: "statement", body: "perform pg_notify('platter_outbox', ''); return null;" },
  ],
});

export const WebhookEndpointEntity = defineEntity({
  name: "WebhookEndpoint",
  tableName: "webhook_endpoints",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    url: p.text(),
    secret: p.text(),
    /** The secret before the last rotation: it keeps signing beside `secret` until `previousSecretUntil`. */
    previousSecret: p.text().nullable(),
    previousSecretUntil: p.datetime(3).nullable(),
    eventTypes: p.array().columnType("text[]").defaultRaw("'{}'"),
    enabled: p.boolean().default(true),
    disabledReason: p.text().nullable(),
    failingSince: p.datetime(3).nullable(),
    createdAt: p.datetime(3).defaultRaw("now()"),
  },
  indexes: [{ name: "webhook_endpoints_organization_idx", properties: ["organization", "id"] }],
});

export const WebhookDeliveryEntity = defineEntity({
  name: "WebhookDelivery",
  tableName: "webhook_deliveries",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    endpoint: p.manyToOne(WebhookEndpointEntity),
    message: p.manyToOne(WebhookMessageEntity),
    envelopeId: p.text(),
    eventType: p.text(),
    body: p.text(),
    status: p.text().default("pending"),
    attempts: p.integer().default(0),
    nextAttemptAt: p.datetime(3).defaultRaw("now()"),
    leaseToken: p.uuid().nullable(),
    leaseExpiresAt: p.datetime(3).nullable(),
    createdAt: p.datetime(3).defaultRaw("now()"),
    completedAt: p.datetime(3).nullable(),
  },
  uniques: [{ name: "webhook_deliveries_endpoint_id_message_id_key", properties: ["endpoint", "message"] }],
  indexes: [
    // Partial: only the deliveries still due.
    { name: "webhook_deliveries_due_idx", properties: ["nextAttemptAt"], where: { status: "pending" } },
    { name: "webhook_deliveries_organization_idx", properties: ["organization", "id"] },
    // Retention: settled deliveries, oldest first; and a message's deliveries.
    { name: "webhook_deliveries_settled_idx", properties: ["completedAt"], where: { status: { $ne: "pending" } } },
    { name: "webhook_deliveries_message_idx", properties: ["message"] },
  ],
  checks: [{ name: "webhook_deliveries_status_check", expression: "status in ('pending', 'succeeded', 'failed')" }],
});

export const WebhookAttemptEntity = defineEntity({
  name: "WebhookAttempt",
  tableName: "webhook_attempts",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    delivery: p.manyToOne(WebhookDeliveryEntity),
    attempt: p.integer(),
    startedAt: p.datetime(3),
    durationMs: p.integer(),
    statusCode: p.integer().nullable(),
    error: p.text().nullable(),
    responseBody: p.text().nullable(),
    nextAttemptAt: p.datetime(3).nullable(),
  },
  indexes: [{ name: "webhook_attempts_delivery_idx", properties: ["delivery", "id"] }],
});
