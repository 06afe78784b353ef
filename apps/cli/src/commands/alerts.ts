import { defineCommand } from "citty";
import { givenId, idArgument, jsonFlag } from "../arguments.ts";
import { connectionOf, DeveloperAreaClient } from "../developer-area-client.ts";
import { UsageError } from "../failures.ts";
import { report } from "../output.ts";

/**
 * `platter alerts …`: the organization's alert e-mail addresses, with an API key through the
 * Developer area (`/cli/alerts`), as its Alerts page keeps them, with a read/write key (as every key
 * command): listed; added (the area mails the confirmation link, and the address gets alerts once it
 * is opened) and removed, each audited as the key's.
 */

/** `--api-key` and `--developer-area-url`, as the other key commands take them. */
const connectionArgs = {
  "api-key": { type: "string", description: "A read/write API key of the organization (default: PLATTER_API_KEY)" },
  "developer-area-url": { type: "string", description: "The Developer area's origin (default: PLATTER_DEVELOPER_AREA_URL, else http://localhost:3001)" },
} as const;

/** Runs `action` with a client of the area from the command's flags, closing it after. */
const withArea = async <A>(flags: { readonly "api-key"?: string | undefined; readonly "developer-area-url"?: string | undefined }, action: (client: DeveloperAreaClient) => Promise<A>): Promise<A> => {
  const client = new DeveloperAreaClient(connectionOf(flags, "a read/write API key of the organization, platter_rw_…"));
  try {
    return await action(client);
  } finally {
    await client.close();
  }
};

const list = defineCommand({
  meta: { name: "list", description: "List the organization's alert e-mail addresses (confirmed or waiting for their link)" },
  args: { ...connectionArgs, json: jsonFlag },
  run: async ({ args }) => {
    const listed = await withArea(args, (client) => client.alertAddresses());
    const lines = listed.recipients.map((recipient) =>
      `${recipient.id}\t${recipient.email}\t${recipient.confirmed_at !== null ? `confirmed ${recipient.confirmed_at}` : recipient.link_expired ? "link expired: remove it and add it again" : `waiting for its link until ${recipient.confirmation_expires_at}`}`);
    report(args.json, listed, lines.join("\n") || "no alert addresses");
  },
});

const add = defineCommand({
  meta: { name: "add", description: "Add an alert e-mail address: it is mailed a confirmation link, and gets alerts once the link is opened (24 hours)" },
  args: { email: { type: "string", required: true, description: "The address, such as dev@example.com" }, ...connectionArgs, json: jsonFlag },
  run: async ({ args }) => {
    if (args.email.trim() === "") throw new UsageError("--email: give an e-mail address");
    const added = await withArea(args, (client) => client.addAlertAddress(args.email));
    report(args.json, added, added.confirmation_mailed
      ? `added ${added.email} (address ${added.id}): a confirmation link was mailed to it; it gets alerts once the link is opened, within 24 hours`
      : `added ${added.email} (address ${added.id}), but its confirmation e-mail could not be sent: remove it and add it again later`);
  },
});

const remove = defineCommand({
  meta: { name: "remove", description: "Remove an alert e-mail address: no alert goes to it from now on" },
  args: { id: idArgument("Address id, as `alerts list` prints it"), ...connectionArgs, json: jsonFlag },
  run: async ({ args }) => {
    const id = givenId(args);
    const removed = await withArea(args, (client) => client.removeAlertAddress(id));
    report(args.json, removed, `removed ${removed.email} (address ${removed.id})`);
  },
});

export const alertsCommand = defineCommand({
  meta: { name: "alerts", description: "The organization's alert e-mail addresses, with an API key through the Developer area" },
  subCommands: { list, add, remove },
});
