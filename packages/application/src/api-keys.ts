import { type Access, type Actor, apiKeyLimitReached, DEFAULT_API_KEYS_PER_ORGANIZATION } from "@platter/domain";
import { ApiKeyRepository } from "@platter/persistence";
import { Effect } from "effect";
import { audited } from "./audited.ts";

/** A new key unless the organization already has `limit` working keys, decided under its row's lock (creates take turns). */
const createWithin = (actor: Actor, access: Access, name: string, lifetimeMs: number | undefined, limit: number) =>
  ApiKeyRepository.use((keys) =>
    Effect.gen(function* () {
      if ((yield* keys.lockForCreation(actor.scope)) >= limit) return yield* apiKeyLimitReached(limit);
      return yield* keys.create(actor.scope, access, name, lifetimeMs);
    }));

/** An organization's API keys, as an actor sees and changes them. A new key's secret is returned once. */
export const ApiKeys = {
  /** The organization's keys, oldest first (never a secret). */
  list: (actor: Actor) => ApiKeyRepository.use((keys) => keys.list(actor.scope)),
  /** One of the organization's keys; `NotFound` for another organization's. */
  find: (actor: Actor, id: number) => ApiKeyRepository.use((keys) => keys.find(actor.scope, id)),
  /**
   * A new key named `name` (already checked with `parseApiKeyName`) that expires `lifetimeMs` from
   * now (never when undefined; checked with `checkKeyLifetime`), audited `api_key.created`;
   * `ApiKeyLimitReached` (nothing written) when the organization already has `limit` working keys
   * (`API_KEYS_PER_ORGANIZATION`).
   */
  create: (actor: Actor, access: Access, name = "", lifetimeMs?: number, limit = DEFAULT_API_KEYS_PER_ORGANIZATION) =>
    audited(actor, createWithin(actor, access, name, lifetimeMs, limit), (key) => ({
      action: "api_key.created",
      subject: `api_key ${key.id}`,
    })),
  /**
   * Replaces a live key with a new one whose secret is returned once; the old one keeps working for
   * `overlapMs` (checked with `checkRollOverlap`). Audited `api_key.rolled` on the old key.
   */
  roll: (actor: Actor, id: number, overlapMs: number) =>
    audited(actor, ApiKeyRepository.use((keys) => keys.roll(actor.scope, id, overlapMs)), () => ({
      action: "api_key.rolled",
      subject: `api_key ${id}`,
    })),
  /** Revokes a key at once, audited `api_key.revoked`; revoking a revoked key changes (and records) nothing. */
  revoke: (actor: Actor, id: number) =>
    audited(actor, ApiKeyRepository.use((keys) => keys.revoke(actor.scope, id)), ({ changed }) =>
      changed ? { action: "api_key.revoked", subject: `api_key ${id}` } : undefined),
};
