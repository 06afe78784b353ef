import type { EntityManager } from "@mikro-orm/postgresql";
import type { BusinessEvent, OrgScope } from "@platter/domain";
import { OutboxEventEntity } from "../entities/index.ts";

/** Outbox payload version 1. A new shape gets a new version beside this one, never an edit. */
export const OUTBOX_PAYLOAD_VERSION = 1;

/** Records a business event in the caller's transaction, so it exists exactly when its change does. */
export const recordOutboxEvent = async (em: EntityManager, scope: OrgScope, event: BusinessEvent): Promise<void> => {
  await em.insert(OutboxEventEntity, {
    organizationId: scope.organizationId,
    type: event.type,
    payload: { version: OUTBOX_PAYLOAD_VERSION, data: event.data },
  });
};
