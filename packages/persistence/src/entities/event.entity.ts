import { defineEntity, p } from "@mikro-orm/postgresql";
import { identityId } from "./columns.ts";
import { ClientEntity, RecipeEntity } from "./catalog.entity.ts";
import { OrganizationEntity } from "./organization.entity.ts";

/** Events with their dishes, and the proposals offered for them. */

export const EventEntity = defineEntity({
  name: "Event",
  tableName: "events",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    client: p.manyToOne(ClientEntity).nullable().deleteRule("no action"),
    name: p.text(),
    eventDate: p.date().nullable(),
    guests: p.integer().nullable(),
    pricePerHeadMinor: p.bigint("number").nullable(),
    eventType: p.text().nullable(),
    status: p.text().default("inquiry"),
    createdAt: p.datetime(3).defaultRaw("now()"),
  },
  // Newest first. Raw DDL, not `columns` with `sort: "desc"`: MikroORM 7.2.1 reads the `id` of this
  // index back as ascending (it finds "id" inside "organization_id"), so the structured form would
  // always show a difference. The schema test compares the index's definition in the catalogue.
  indexes: [
    {
      name: "events_keyset_idx",
      expression: "create index events_keyset_idx on events (organization_id, created_at desc, id desc)",
    },
  ],
  checks: [
    { name: "events_guests_check", expression: "guests > 0" },
    { name: "events_price_per_head_minor_check", expression: "price_per_head_minor >= 0" },
    { name: "events_status_check", expression: "status in ('inquiry', 'proposed', 'confirmed', 'completed', 'cancelled')" },
  ],
});

export const DishEntity = defineEntity({
  name: "Dish",
  tableName: "dishes",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    event: p.manyToOne(EventEntity),
    recipe: p.manyToOne(RecipeEntity),
    position: p.integer(),
    course: p.text(),
    servings: p.integer(),
  },
  indexes: [{ name: "dishes_event_idx", properties: ["event", "position"] }],
  checks: [{ name: "dishes_servings_check", expression: "servings > 0" }],
});

export const ProposalEntity = defineEntity({
  name: "Proposal",
  tableName: "proposals",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    event: p.manyToOne(EventEntity),
    title: p.text(),
    status: p.text().default("draft"),
    totalMinor: p.bigint("number").defaultRaw("0"),
    createdAt: p.datetime(3).defaultRaw("now()"),
    approvedAt: p.datetime(3).nullable(),
  },
  indexes: [{ name: "proposals_event_idx", properties: ["organization", "event"] }],
  checks: [{ name: "proposals_status_check", expression: "status in ('draft', 'sent', 'approved', 'declined')" }],
});
