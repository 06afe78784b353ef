import { defineEntity, p } from "@mikro-orm/postgresql";

/** Events with their dishes, and the proposals offered for them. */

export const EventEntity = defineEntity({
  name: "Event",
  tableName: "events",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    organizationId: p.bigint("number"),
    clientId: p.bigint("number").nullable(),
    name: p.text(),
    eventDate: p.date().nullable(),
    guests: p.integer().nullable(),
    pricePerHeadMinor: p.bigint("number").nullable(),
    eventType: p.text().nullable(),
    status: p.text(),
    createdAt: p.datetime(3).defaultRaw("now()"),
  },
});

export const DishEntity = defineEntity({
  name: "Dish",
  tableName: "dishes",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    organizationId: p.bigint("number"),
    eventId: p.bigint("number"),
    recipeId: p.bigint("number"),
    position: p.integer(),
    course: p.text(),
    servings: p.integer(),
  },
});

export const ProposalEntity = defineEntity({
  name: "Proposal",
  tableName: "proposals",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    organizationId: p.bigint("number"),
    eventId: p.bigint("number"),
    title: p.text(),
    status: p.text(),
    totalMinor: p.bigint("number"),
    createdAt: p.datetime(3).defaultRaw("now()"),
    approvedAt: p.datetime(3).nullable(),
  },
});
