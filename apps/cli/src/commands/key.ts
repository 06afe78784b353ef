import { ApiKeys } from "@platter/application";
import { ACCESS_LEVELS, checkKeyLifetime, checkRollOverlap } from "@platter/domain";
import { Effect } from "effect";
import { defineCommand } from "citty";
import { duration, jsonFlag, oneOf, positiveInteger } from "../arguments.ts";
import { loadCliConfig } from "../config.ts";
import { inOrganization, inOwnerOf, runAction, withPlatform } from "../database-session.ts";
import { report } from "../output.ts";

/** `platter key …`: API keys, each change audited as the operator's. A key's secret is shown once, at creation; only its hash is stored. */
export const keyCommand = defineCommand({
  meta: { name: "key", description: "Manage API keys" },
  subCommands: {
    create: defineCommand({
      meta: { name: "create", description: "Create an API key for an organization (the secret is shown once)" },
      args: {
        org: { type: "string", required: true, description: "Organization id" },
        access: { type: "string", required: true, description: `Access level: ${ACCESS_LEVELS.join(" or ")}` },
        "expires-in": { type: "string", description: "Stop working after this long (1h to 3 years, e.g. 90d); never when omitted" },
        json: jsonFlag,
      },
      run: async ({ args }) => {
        const organizationId = positiveInteger("org", args.org);
        const access = oneOf("access", args.access, ACCESS_LEVELS);
        const lifetimeMs = args["expires-in"] === undefined ? undefined : duration("expires-in", args["expires-in"]);
        const config = loadCliConfig();
        const created = await withPlatform(config, (platform) =>
          runAction(
            platform,
            Effect.flatMap(Effect.fromResult(checkKeyLifetime(lifetimeMs)), (lifetime) =>
              inOrganization(organizationId, (operator) => ApiKeys.create(operator, access, "", lifetime, config.apiKeysPerOrganization))),
            `organization ${organizationId} does not exist`,
          ),
        );
        report(
          args.json,
          created,
          `created ${access} key ${created.id} for organization ${organizationId}` +
            `${lifetimeMs === undefined ? "" : `, expiring in ${args["expires-in"]}`}:\n\n  ${created.key}\n\n` +
            "Store it now: it cannot be shown again.",
        );
      },
    }),
    roll: defineCommand({
      meta: { name: "roll", description: "Replace an API key with a new secret; the old one keeps working for --overlap (the new secret is shown once)" },
      args: {
        id: { type: "string", required: true, description: "Key id (as printed by `key create`)" },
        overlap: { type: "string", default: "24h", description: "How long the old key keeps working: 0 (stops now) to 30d" },
        json: jsonFlag,
      },
      run: async ({ args }) => {
        const keyId = positiveInteger("id", args.id);
        const overlapMs = duration("overlap", args.overlap);
        const rolled = await withPlatform(loadCliConfig(), (platform) =>
          runAction(
            platform,
            Effect.flatMap(Effect.fromResult(checkRollOverlap(overlapMs)), (overlap) =>
              inOwnerOf("api_keys", keyId, (operator) => ApiKeys.roll(operator, keyId, overlap))),
            `key ${keyId} does not exist`,
          ),
        );
        report(
          args.json,
          rolled,
          `rolled key ${keyId}: its replacement is key ${rolled.id}:\n\n  ${rolled.key}\n\n` +
            `Store it now: it cannot be shown again. Key ${keyId} keeps working until ${rolled.old_key_expires_at}.`,
        );
      },
    }),
    revoke: defineCommand({
      meta: { name: "revoke", description: "Revoke an API key at once" },
      args: {
        id: { type: "string", required: true, description: "Key id (as printed by `key create`)" },
        json: jsonFlag,
      },
      run: async ({ args }) => {
        const keyId = positiveInteger("id", args.id);
        await withPlatform(loadCliConfig(), (platform) =>
          runAction(
            platform,
            inOwnerOf("api_keys", keyId, (operator) => ApiKeys.revoke(operator, keyId)),
            `key ${keyId} does not exist`,
          ),
        );
        report(args.json, { id: keyId, revoked: true }, `revoked key ${keyId}`);
      },
    }),
  },
});
