import { ProcessInstanceEntity } from "./process-instance.entity.ts";
import { AlertMailEntity, AlertRecipientEntity } from "./alert.entity.ts";
import { ClientEntity, IngredientEntity, RecipeEntity } from "./catalog.entity.ts";
import { AuditLogEntity, DeveloperSessionEntity, DeveloperSignInLinkEntity } from "./developer-area.entity.ts";
import { DishEntity, EventEntity, ProposalEntity } from "./event.entity.ts";
import { IdempotencyKeyEntity } from "./idempotency-key.entity.ts";
import { InvoiceEntity, InvoiceLineItemEntity } from "./invoice.entity.ts";
import { ApiKeyEntity, OrganizationEntity } from "./organization.entity.ts";
import { HistoryIdMarkEntity } from "./history-id-mark.entity.ts";
import { ApiRequestEntity } from "./request-log.entity.ts";
import { SecretKeyCheckEntity } from "./secret-key-check.entity.ts";
import { EndpointNoticeEntity, WebhookAttemptEntity, WebhookDeliveryEntity, WebhookEndpointEntity, WebhookMessageEntity } from "./webhook.entity.ts";

export * from "./process-instance.entity.ts";
export * from "./alert.entity.ts";
export * from "./catalog.entity.ts";
export * from "./developer-area.entity.ts";
export * from "./event.entity.ts";
export * from "./idempotency-key.entity.ts";
export * from "./invoice.entity.ts";
export * from "./organization.entity.ts";
export * from "./history-id-mark.entity.ts";
export * from "./request-log.entity.ts";
export * from "./secret-key-check.entity.ts";
export * from "./webhook.entity.ts";

/** Every entity: the schema model the migrations must match (test/schema.test.ts checks it). */
export const allEntities = [
  OrganizationEntity, ApiKeyEntity, ClientEntity, RecipeEntity, IngredientEntity, EventEntity, DishEntity, ProposalEntity,
  InvoiceEntity, InvoiceLineItemEntity, IdempotencyKeyEntity, WebhookMessageEntity, WebhookEndpointEntity,
  WebhookDeliveryEntity, WebhookAttemptEntity, ProcessInstanceEntity, DeveloperSignInLinkEntity, DeveloperSessionEntity,
  AuditLogEntity, ApiRequestEntity, EndpointNoticeEntity, SecretKeyCheckEntity,
  AlertRecipientEntity, AlertMailEntity, HistoryIdMarkEntity,
];
