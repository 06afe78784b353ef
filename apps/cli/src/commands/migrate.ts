import { defineCommand } from "citty";
import { jsonFlag } from "../arguments.ts";
import { loadCliConfig } from "../config.ts";
import { withPlatform } from "../database-session.ts";
import { report } from "../output.ts";

/** `platter migrate`: brings the schema up to date (every command does this first anyway). */
export const migrateCommand = defineCommand({
  meta: { name: "migrate", description: "Apply pending database migrations" },
  args: { json: jsonFlag },
  run: async ({ args }) => {
    await withPlatform(loadCliConfig(), async () => {});
    report(args.json, { migrated: true }, "database schema is up to date");
  },
});
