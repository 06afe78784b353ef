import { DeveloperAreaSessions, makeSignInLink } from "@platter/application";
import { defineCommand } from "citty";
import { Effect } from "effect";
import { jsonFlag, positiveInteger } from "../arguments.ts";
import { loadCliConfig } from "../config.ts";
import { inOrganization, runAction, withPlatform } from "../database-session.ts";
import { report } from "../output.ts";

/** `platter developer-area …`: access to the Developer area, where an organization's developers manage their integration. */
export const developerAreaCommand = defineCommand({
  meta: { name: "developer-area", description: "The Developer area: sign-in links for an organization's developers, and their sessions" },
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
    sessions: defineCommand({
      meta: { name: "sessions", description: "List an organization's live Developer-area sessions (device, started, last seen)" },
      args: {
        org: { type: "string", required: true, description: "Organization id" },
        json: jsonFlag,
      },
      run: async ({ args }) => {
        const organizationId = positiveInteger("org", args.org);
        const sessions = await withPlatform(loadCliConfig(), (platform) =>
          runAction(platform, inOrganization(organizationId, (operator) => DeveloperAreaSessions.list(operator)), `organization ${organizationId} does not exist`),
        );
        report(
          args.json,
          { sessions },
          sessions.length === 0
            ? `organization ${organizationId} has no live Developer-area session`
            : sessions.map((session) =>
              `session ${session.id}: ${session.device_hint ?? "unknown device"}, started ${session.started_at}, last seen ${session.last_seen_at ?? "unknown"}, ends ${session.expires_at}`,
            ).join("\n"),
        );
      },
    }),
    "end-sessions": defineCommand({
      meta: { name: "end-sessions", description: "End an organization's Developer-area sessions at once (all, or one with --session); audited as yours" },
      args: {
        org: { type: "string", required: true, description: "Organization id" },
        session: { type: "string", description: "End only this session (its id, as `developer-area sessions` prints it)" },
        json: jsonFlag,
      },
      run: async ({ args }) => {
        const organizationId = positiveInteger("org", args.org);
        const sessionId = args.session === undefined ? undefined : positiveInteger("session", args.session);
        const ended = await withPlatform(loadCliConfig(), (platform) =>
          runAction(
            platform,
            inOrganization(organizationId, (operator) =>
              sessionId === undefined
                ? DeveloperAreaSessions.endOthers(operator)
                : Effect.map(DeveloperAreaSessions.end(operator, sessionId), ({ changed }) => (changed ? [sessionId] : []))),
            sessionId === undefined
              ? `organization ${organizationId} does not exist`
              : `session ${sessionId} of organization ${organizationId} does not exist`,
          ),
        );
        report(
          args.json,
          { ended },
          ended.length === 0
            ? `no live session to end in organization ${organizationId}`
            : `ended ${ended.length === 1 ? "session" : "sessions"} ${ended.join(", ")} of organization ${organizationId}: their next page asks to sign in again`,
        );
      },
    }),
  },
});
