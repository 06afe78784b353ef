import { ApiKeys } from "@platter/application";
import { ACCESS_LEVELS } from "@platter/domain";
import { defineCommand } from "citty";
import { jsonFlag, oneOf, positiveInteger } from "../arguments.ts";
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
        json: jsonFlag,
      },
      run: async ({ args }) => {
        const organizationId = positiveInteger("org", args.org);
        const access = oneOf("access", args.access, ACCESS_LEVELS);
        const created = await withPlatform(loadCliConfig(), (platform) =>
          runAction(
            platform,
            inOrganization(organizationId, (operator) => ApiKeys.create(operator, access)),
            `organization ${organizationId} does not exist`,
          ),
        );
        report(
          args.json,
          created,
          `created ${access} key ${created.id} for organization ${organizationId}:\n\n  ${created.key}\n\n` +
            "Store it now: it cannot be shown again.",
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
