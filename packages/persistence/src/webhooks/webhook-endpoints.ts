import { randomBytes } from "node:crypto";
import { NotFound, type WebhookEventType } from "@platter/domain";
import { Effect } from "effect";
import type { Orm } from "../database.ts";
import { isoTimestamp } from "../scoped-sql.ts";

/** Webhook endpoints as operators manage them: register, list, enable/disable, rotate the signing secret. */

/** A signing secret: `whsec_` and 32 random bytes in base64url. The whole string is the HMAC key. */
export const generateSigningSecret = (): string => `whsec_${randomBytes(32).toString("base64url")}`;

export interface WebhookEndpointView {
  readonly id: number;
  readonly url: string;
  readonly event_types: string[];
  readonly enabled: boolean;
  readonly disabled_reason: string | null;
  readonly created_at: string;
}

interface EndpointRow {
  id: string;
  url: string;
  event_types: string[];
  enabled: boolean;
  disabled_reason: string | null;
  created_at: string;
}

const toView = (row: EndpointRow): WebhookEndpointView => ({
  id: Number(row.id),
  url: row.url,
  event_types: row.event_types,
  enabled: row.enabled,
  disabled_reason: row.disabled_reason,
  created_at: row.created_at,
});

const exec = <T>(orm: Orm, sql: string, params: unknown[]) =>
  Effect.promise(() => orm.em.getConnection().execute<T[]>(sql, params));

const one = <T>(rows: T[]) => (rows[0] === undefined ? Effect.fail(new NotFound()) : Effect.succeed(rows[0]));

/** Registers an endpoint (the URL must already be checked) and returns its signing secret once. */
export const addWebhookEndpoint = (orm: Orm, organizationId: number, url: string, eventTypes: WebhookEventType[]) => {
  const secret = generateSigningSecret();
  return Effect.flatMap(
    exec<{ id: string }>(
      orm,
      `insert into webhook_endpoints (organization_id, url, secret, event_types)
       select o.id, ?, ?, ?::text[] from organizations o where o.id = ? returning id`,
      [url, secret, `{${eventTypes.join(",")}}`, organizationId],
    ),
    (rows) => Effect.map(one(rows), (row) => ({ id: Number(row.id), secret })),
  );
};

export const listWebhookEndpoints = (orm: Orm, organizationId: number) =>
  Effect.map(
    exec<EndpointRow>(
      orm,
      `select id, url, event_types, enabled, disabled_reason, ${isoTimestamp("created_at")} as created_at
       from webhook_endpoints where organization_id = ? order by id`,
      [organizationId],
    ),
    (rows) => rows.map(toView),
  );

/** Enabling clears the failure window, so a repaired endpoint gets a fresh start. */
export const setWebhookEndpointEnabled = (orm: Orm, endpointId: number, enabled: boolean) =>
  Effect.flatMap(
    exec<{ id: string }>(
      orm,
      `update webhook_endpoints set enabled = ?, failing_since = null,
         disabled_reason = case when ? then null else 'disabled by an operator' end
       where id = ? returning id`,
      [enabled, enabled, endpointId],
    ),
    (rows) => Effect.map(one(rows), () => ({ id: endpointId, enabled })),
  );

/** Replaces the signing secret; deliveries from now on are signed with the new one. */
export const rotateWebhookSecret = (orm: Orm, endpointId: number) => {
  const secret = generateSigningSecret();
  return Effect.flatMap(
    exec<{ id: string }>(orm, "update webhook_endpoints set secret = ? where id = ? returning id", [secret, endpointId]),
    (rows) => Effect.map(one(rows), () => ({ id: endpointId, secret })),
  );
};
