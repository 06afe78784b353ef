import { storedMessage, type WebhookMessage } from "@platter/domain";
import type { Effect } from "effect";
import { WebhookMessageEntity } from "../entities/index.ts";
import type { OrgSql } from "../org-sql.ts";

/**
 * Records a webhook message in the caller's transaction (the transactional outbox), so a message
 * exists exactly when the change it reports does. Written through the domain's message schema.
 */
export const recordMessage = (tx: OrgSql, message: WebhookMessage): Effect.Effect<number> => {
  const { type, payload } = storedMessage(message);
  return tx.insert(WebhookMessageEntity, { type, payload });
};
