import { defineEntity, p } from "@mikro-orm/postgresql";

/**
 * A business event waiting to be fanned out to webhook endpoints. Written in the same
 * transaction as the change it reports, so an event exists exactly when its change does.
 */
export const OutboxEventEntity = defineEntity({
  name: "OutboxEvent",
  tableName: "outbox_events",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    organizationId: p.bigint("number"),
    /** The envelope `id` integrators see; stable across every retry. */
    envelopeId: p.text().unique().defaultRaw("('evt_' || replace(gen_random_uuid()::text, '-', ''))"),
    type: p.text(),
    /** The versioned outbox payload (`{"version":1,"data":{…}}`). */
    payload: p.json<Record<string, unknown>>(),
    createdAt: p.datetime(3).defaultRaw("now()"),
    fannedOutAt: p.datetime(3).nullable(),
  },
});
