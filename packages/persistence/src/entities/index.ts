export * from "./catalog.entity.ts";
export * from "./event.entity.ts";
export * from "./invoice.entity.ts";
export * from "./organization.entity.ts";
export * from "./outbox.entity.ts";
import { ClientEntity, IngredientEntity, RecipeEntity } from "./catalog.entity.ts";
import { DishEntity, EventEntity, ProposalEntity } from "./event.entity.ts";
import { InvoiceEntity, InvoiceLineItemEntity } from "./invoice.entity.ts";
import { ApiKeyEntity, OrganizationEntity } from "./organization.entity.ts";
import { OutboxEventEntity } from "./outbox.entity.ts";

/** Every entity, for the ORM's metadata. */
export const allEntities = [
  OrganizationEntity, ApiKeyEntity, ClientEntity, RecipeEntity, IngredientEntity, EventEntity, DishEntity,
  ProposalEntity, InvoiceEntity, InvoiceLineItemEntity, OutboxEventEntity,
];
