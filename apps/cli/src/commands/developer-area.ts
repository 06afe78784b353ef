import { makeSignInLink } from "@platter/developer-area";
import { defineCommand } from "citty";
import { jsonFlag, positiveInteger } from "../arguments.ts";
import { loadCliConfig } from "../config.ts";
import { runAction, withPlatform } from "../database-session.ts";
import { report } from "../output.ts";

/** `platter developer-area …`: access to the Developer area, where an organization's developers manage their integration. */
export const developerAreaCommand = defineCommand({
  meta: { name: "developer-area", description: "The Developer area: sign-in links for an organization's developers" },
  subCommands: {
    link: defineCommand({
      meta: { name: "link", description: "Make a single-use sign-in link (valid 15 minutes) to an organization's Developer area" },
      args: {
        org: { type: "string", required: true, description: "Organization id" },
        json: jsonFlag,
      },
      run: async ({ args }) => {
        const organizationId = positiveInteger("org", args.org);
        const config = loadCliConfig();
        const link = await withPlatform(config, (platform) =>
          runAction(platform, makeSignInLink(config.developerAreaUrl, organizationId, "cli"), `organization ${organizationId} does not exist`),
        );
        report(
          args.json,
          { url: link.url },
          `sign-in link to the Developer area of organization ${organizationId} (works once, until ${link.expires_at}):\n\n  ${link.url}`,
        );
      },
    }),
  },
});
