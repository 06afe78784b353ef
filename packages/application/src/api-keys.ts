import type { Access, Actor } from "@platter/domain";
import { ApiKeyRepository } from "@platter/persistence";
import { audited } from "./audited.ts";

/** An organization's API keys, as an actor sees and changes them. A new key's secret is returned once. */
export const ApiKeys = {
  /** The organization's keys, oldest first (never a secret). */
  list: (actor: Actor) => ApiKeyRepository.use((keys) => keys.list(actor.scope)),
  /** One of the organization's keys; `NotFound` for another organization's. */
  find: (actor: Actor, id: number) => ApiKeyRepository.use((keys) => keys.find(actor.scope, id)),
  /** A new key named `name` (already checked with `parseApiKeyName`), audited `api_key.created`. */
  create: (actor: Actor, access: Access, name = "") =>
    audited(actor, ApiKeyRepository.use((keys) => keys.create(actor.scope, access, name)), (key) => ({
      action: "api_key.created",
      subject: `api_key ${key.id}`,
    })),
  /** Revokes a key at once, audited `api_key.revoked`; revoking a revoked key changes (and records) nothing. */
  revoke: (actor: Actor, id: number) =>
    audited(actor, ApiKeyRepository.use((keys) => keys.revoke(actor.scope, id)), ({ changed }) =>
      changed ? { action: "api_key.revoked", subject: `api_key ${id}` } : undefined),
};
