import { DemoData } from "@platter/application";
import { Seeding } from "@platter/seeds";
import { defineCommand } from "citty";
import { count, jsonFlag, positiveInteger } from "../arguments.ts";
import { loadCliConfig } from "../config.ts";
import { inOrganization, runAction, withPlatform } from "../database-session.ts";
import { report } from "../output.ts";
import { progressFor } from "../progress-bar.ts";

/** `platter seed …`: sample data for an existing organization. */

const orgArg = { type: "string", required: true, description: "Organization id" } as const;


const demo = defineCommand({
  meta: { name: "demo", description: "Seed a small, realistic catering data set (one transaction)" },
  args: { org: orgArg, json: jsonFlag },
  run: async ({ args }) => {
    const organizationId = positiveInteger("org", args.org);
    const counts = await withPlatform(loadCliConfig(), (platform) =>
      runAction(
        platform,
        inOrganization(organizationId, ({ scope }) => DemoData.seed(scope)),
        `organization ${organizationId} does not exist`,
      ),
    );
    report(
      args.json,
      counts,
      `seeded organization ${organizationId} with ${counts.recipes} recipes, ${counts.clients} clients, ` +
        `${counts.events} events and ${counts.invoices} invoices`,
    );
  },
});

const bulk = defineCommand({
  meta: { name: "bulk", description: "Seed large volumes of generated data (for load tests)" },
  args: {
    org: orgArg,
    events: { type: "string", default: "10000", description: "Number of events" },
    clients: { type: "string", default: "1000", description: "Number of clients" },
    invoices: { type: "string", default: "10000", description: "Number of invoices" },
    json: jsonFlag,
  },
  run: async ({ args }) => {
    const organizationId = positiveInteger("org", args.org);
    const options = {
      events: count("events", args.events),
      clients: count("clients", args.clients),
      invoices: count("invoices", args.invoices),
    };
    const progress = progressFor(args.json);
    const seconds = await withPlatform(loadCliConfig(), async (platform) => {
      const started = performance.now();
      try {
        await runAction(
          platform,
          inOrganization(organizationId, ({ scope }) => Seeding.bulk(scope, options, progress.update)),
          `organization ${organizationId} does not exist`,
        );
      } finally {
        progress.stop();
      }
      return Math.round((performance.now() - started) / 100) / 10;
    });
    const { events, clients, invoices } = options;
    report(
      args.json,
      { events, clients, invoices, seconds },
      `seeded organization ${organizationId} with ${events} events, ${clients} clients and ${invoices} invoices in ${seconds} s`,
    );
  },
});

export const seedCommand = defineCommand({
  meta: { name: "seed", description: "Seed sample data into an organization" },
  subCommands: { demo, bulk },
});
