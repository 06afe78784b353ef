import { randomBytes } from "node:crypto";
import { NotFound, type OrgScope, type WebhookEventType } from "@platter/domain";
import { Clock, Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { WebhookEndpointEntity } from "../entities/index.ts";
import { isoTimestamp } from "../keyset-page.ts";
import { orgSql, sql } from "../org-sql.ts";
import { traced } from "../traced.ts";

/** An organization's webhook endpoints: register, list, enable/disable, rotate the signing secret. */

/**
 * A signing secret: `whsec_` and 32 random bytes in base64, the form Standard Webhooks libraries
 * read (their HMAC key is the decoded bytes); the spec's `x-platter-signature` keys with the whole
 * string. Secrets made before were base64url, which Node decodes alike; rotating gives a base64 one.
 */
export const generateSigningSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`;

/** An endpoint as its organization sees it (never its secret). */
export interface WebhookEndpointView {
  readonly id: number;
  readonly url: string;
  readonly event_types: string[];
  readonly enabled: boolean;
  readonly disabled_reason: string | null;
  readonly created_at: string;
}

export class WebhookEndpointRepository extends Context.Service<
  WebhookEndpointRepository,
  {
    /** Registers an endpoint (its URL already checked by the SSRF guard) and returns its signing secret once. */
    readonly add: (
      scope: OrgScope,
      url: string,
      eventTypes: ReadonlyArray<WebhookEventType>,
    ) => Effect.Effect<{ readonly id: number; readonly secret: string }>;
    readonly list: (scope: OrgScope) => Effect.Effect<ReadonlyArray<WebhookEndpointView>>;
    /** Enabling clears the failure window, so a repaired endpoint gets a fresh start. */
    readonly setEnabled: (
      scope: OrgScope,
      id: number,
      enabled: boolean,
    ) => Effect.Effect<{ readonly id: number; readonly enabled: boolean }, NotFound>;
    /**
     * Replaces the signing secret. Deliveries from now on are signed with the new one; the old one
     * keeps signing beside it (in `webhook-signature`) for `overlapMs`, so receivers can switch at leisure.
     */
    readonly rotateSecret: (
      scope: OrgScope,
      id: number,
      overlapMs: number,
    ) => Effect.Effect<{ readonly id: number; readonly secret: string; readonly previous_secret_until: string }, NotFound>;
  }
>()("platter/persistence/WebhookEndpointRepository") {
  static readonly layer = Layer.effect(
    WebhookEndpointRepository,
    Effect.gen(function* () {
      const database = yield* Database;
      return WebhookEndpointRepository.of({
        add: traced("WebhookEndpointRepository.add")(Effect.fnUntraced(function* (scope: OrgScope, url: string, eventTypes: ReadonlyArray<WebhookEventType>) {
          const secret = generateSigningSecret();
          const id = yield* orgSql(database, scope).insert(WebhookEndpointEntity, { url, secret, eventTypes: [...eventTypes] });
          return { id, secret };
        })),
        list: traced("WebhookEndpointRepository.list")(Effect.fnUntraced(function* (scope: OrgScope) {
          const rows = yield* orgSql(database, scope).select<WebhookEndpointView & { id: string }>({
            columns: `w.id, w.url, w.event_types, w.enabled, w.disabled_reason, ${isoTimestamp("w.created_at")} as created_at`,
            from: "webhook_endpoints",
            as: "w",
            rest: sql`order by w.id`,
          });
          return rows.map((row) => ({ ...row, id: Number(row.id) }));
        })),
        setEnabled: traced("WebhookEndpointRepository.setEnabled")(Effect.fnUntraced(function* (scope: OrgScope, id: number, enabled: boolean) {
          const [row] = yield* orgSql(database, scope).update<{ id: string }>({
            table: "webhook_endpoints",
            as: "w",
            set: sql`enabled = ${enabled}, failing_since = null,
              disabled_reason = case when ${enabled} then null else 'disabled by an operator' end`,
            where: sql`w.id = ${id}`,
            returning: "w.id",
          });
          if (row === undefined) return yield* new NotFound();
          return { id, enabled };
        })),
        rotateSecret: traced("WebhookEndpointRepository.rotateSecret")(Effect.fnUntraced(function* (scope: OrgScope, id: number, overlapMs: number) {
          const secret = generateSigningSecret();
          const until = new Date((yield* Clock.currentTimeMillis) + overlapMs).toISOString();
          const [row] = yield* orgSql(database, scope).update<{ id: string }>({
            table: "webhook_endpoints",
            as: "w",
            set: sql`previous_secret = w.secret, previous_secret_until = ${until}::timestamptz, secret = ${secret}`,
            where: sql`w.id = ${id}`,
            returning: "w.id",
          });
          if (row === undefined) return yield* new NotFound();
          return { id, secret, previous_secret_until: until };
        })),
      });
    }),
  );
}
