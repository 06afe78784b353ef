import { Operator } from "@platter/persistence/operator";
import { defineCommand } from "citty";
import { jsonFlag } from "../arguments.ts";
import { loadCliConfig } from "../config.ts";
import { runAction, withPlatform } from "../database-session.ts";
import { report } from "../output.ts";

/** `platter org …`: organizations. */
export const orgCommand = defineCommand({
  meta: { name: "org", description: "Manage organizations" },
  subCommands: {
    create: defineCommand({
      meta: { name: "create", description: "Create an organization" },
      args: {
        name: { type: "string", required: true, description: "Display name" },
        currency: { type: "string", required: true, description: "ISO 4217 currency code of its amounts, such as EUR" },
        json: jsonFlag,
      },
      run: async ({ args }) => {
        const { id } = await withPlatform(loadCliConfig(), (platform) =>
          runAction(platform, Operator.use((o) => o.createOrganization({ name: args.name, currency: args.currency })), "organization not created"),
        );
        report(args.json, { id }, `created organization ${id} "${args.name.trim()}" (${args.currency})`);
      },
    }),
  },
});
