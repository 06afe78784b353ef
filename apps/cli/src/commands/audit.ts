import { AuditEntries } from "@platter/application";
import { auditLogListing, parseAuditLogFilter, parsePageRequest } from "@platter/domain";
import type { AuditEntry } from "@platter/persistence";
import { defineCommand } from "citty";
import { Result } from "effect";
import { jsonFlag, positiveInteger } from "../arguments.ts";
import { loadCliConfig } from "../config.ts";
import { inOrganization, runAction, withPlatform } from "../database-session.ts";
import { UsageError } from "../failures.ts";
import { report } from "../output.ts";

/** `platter audit --org N`: an organization's audit log, newest first, a page at a time (`--cursor`), with what each change changed. */

/** Who made an entry's change, in a few words. */
const actorOf = (entry: AuditEntry) =>
  entry.operator ?? (entry.api_key === null ? `session${entry.device_hint === null ? "" : ` (${entry.device_hint})`}` : `key ${entry.api_key.name} (${entry.api_key.prefix}…)`);

/** An entry's details as `field: before → after`, one per changed field. */
const detailsOf = (entry: AuditEntry) =>
  entry.details === null
    ? ""
    : Object.keys(entry.details.after)
      .map((key) => `\n    ${key}: ${JSON.stringify(entry.details?.before[key])} → ${JSON.stringify(entry.details?.after[key])}`)
      .join("");

export const auditCommand = defineCommand({
  meta: { name: "audit", description: "Show an organization's audit log, newest first, with what each change changed (before → after)" },
  args: {
    org: { type: "string", required: true, description: "Organization id" },
    action: { type: "string", description: "Only this action (webhook_endpoint.updated)" },
    limit: { type: "string", description: "Entries per page (default 100, at most 500)" },
    cursor: { type: "string", description: "The next_cursor of the page before" },
    json: jsonFlag,
  },
  run: async ({ args }) => {
    const organizationId = positiveInteger("org", args.org);
    const filter = parseAuditLogFilter(args.action === undefined ? {} : { action: args.action });
    if (Result.isFailure(filter)) throw new UsageError(filter.failure.message);
    const page = parsePageRequest(auditLogListing, { ...(args.limit === undefined ? {} : { limit: args.limit }), ...(args.cursor === undefined ? {} : { cursor: args.cursor }) });
    if (Result.isFailure(page)) throw new UsageError("--cursor is not a cursor of this log: start again without it");
    const log = await withPlatform(loadCliConfig(), (platform) =>
      runAction(
        platform,
        inOrganization(organizationId, (operator) => AuditEntries.page(operator, filter.success, page.success)),
        `organization ${organizationId} does not exist`,
      ),
    );
    const lines = log.data.map((entry) => `${entry.at}\t${entry.action}\t${entry.subject}\t${actorOf(entry)}${detailsOf(entry)}`);
    report(args.json, log, (lines.join("\n") || "no entries") + (log.next_cursor === null ? "" : `\nmore: --cursor ${log.next_cursor}`));
  },
});
