import { type CommandDef, defineCommand, renderUsage, runCommand } from "citty";
import { stripVTControlCharacters } from "node:util";
import { alertsCommand } from "./commands/alerts.ts";
import { auditCommand } from "./commands/audit.ts";
import { inquiryCommand, invoiceCommand, proposalCommand } from "./commands/business.ts";
import { deliveriesCommand } from "./commands/deliveries.ts";
import { developerAreaCommand } from "./commands/developer-area.ts";
import { keyCommand } from "./commands/key.ts";
import { listenCommand } from "./commands/listen.ts";
import { messagesCommand } from "./commands/messages.ts";
import { migrateCommand } from "./commands/migrate.ts";
import { orgCommand } from "./commands/org.ts";
import { sandboxCommand, triggerCommand } from "./commands/sandbox.ts";
import { secretsCommand } from "./commands/secrets.ts";
import { seedCommand } from "./commands/seed.ts";
import { startCommand } from "./commands/start.ts";
import { webhookCommand } from "./commands/webhook.ts";
import { ConfigError } from "@platter/ops";
import { exitCodeOf, LimitReached, messageOf, UsageError } from "./failures.ts";

/**
 * `platter`: the operator CLI. citty parses arguments and dispatches; this entry point owns the
 * exit codes (0 done, 1 failed, 2 called wrongly) and keeps usage and errors off stdout, which
 * `runMain` would not (it prints usage on stdout and exits 1 for every error).
 */
const platter: CommandDef = defineCommand({
  meta: { name: "platter", description: "Operate Platter: migrations, organizations, API keys, sample data, webhooks, business events, sandboxes, Developer-area links, local start, local webhook forwarding, the message feed, stored secrets' keys, the audit log" },
  subCommands: {
    start: startCommand,
    migrate: migrateCommand,
    org: orgCommand,
    key: keyCommand,
    seed: seedCommand,
    webhook: webhookCommand,
    // `platter endpoints …` is `platter webhook …` (`platter endpoints update 12 --url …`).
    endpoints: webhookCommand,
    audit: auditCommand,
    alerts: alertsCommand,
    deliveries: deliveriesCommand,
    invoice: invoiceCommand,
    proposal: proposalCommand,
    inquiry: inquiryCommand,
    "developer-area": developerAreaCommand,
    sandbox: sandboxCommand,
    trigger: triggerCommand,
    listen: listenCommand,
    messages: messagesCommand,
    secrets: secretsCommand,
  },
});

/** The command named by the leading words of `args` (`key create …`), its parent, and its words. */
const commandFor = (args: readonly string[]) => {
  let command = platter;
  let parent: CommandDef | undefined;
  const path: string[] = [];
  for (const word of args) {
    if (word.startsWith("-")) continue;
    const next = (command.subCommands as Record<string, CommandDef> | undefined)?.[word];
    if (next === undefined) break;
    [parent, command] = [command, next];
    path.push(word);
  }
  return { command, parent, path };
};

/**
 * The first `--option` the command named by `args` does not declare (citty would ignore it, so a
 * typo such as `--forward_to` or a flag of another command would pass unnoticed); undefined when
 * every one is known.
 */
const unknownOption = (args: readonly string[]): string | undefined => {
  const declared = commandFor(args).command.args;
  if (declared === undefined || typeof declared !== "object") return undefined;
  const known = new Set(Object.entries(declared as Record<string, { alias?: string | string[] }>)
    .flatMap(([name, definition]) => [name, ...[definition.alias ?? []].flat()]));
  for (const arg of args) {
    if (arg === "--") return undefined;
    if (!arg.startsWith("--")) continue;
    const name = arg.slice(2).split("=")[0]!;
    if (!known.has(name) && !(name.startsWith("no-") && known.has(name.slice(3)))) return `--${name}`;
  }
  return undefined;
};

const main = async (args: string[]): Promise<number> => {
  if (args.includes("--help") || args.includes("-h")) {
    const { command, parent } = commandFor(args);
    process.stdout.write(`${await renderUsage(command, parent)}\n`);
    return 0;
  }
  try {
    const unknown = unknownOption(args);
    if (unknown !== undefined) throw new UsageError(`unknown option ${unknown}`);
    await runCommand(platter, { rawArgs: args });
    return 0;
  } catch (error) {
    const code = exitCodeOf(error);
    // A command called wrongly points at its help; a bad setting names its variable, which is the help.
    const hint = code === 2 && !(error instanceof ConfigError) && !(error instanceof LimitReached) ? `\nsee \`${["platter", ...commandFor(args).path].join(" ")} --help\`` : "";
    process.stderr.write(`platter: ${stripVTControlCharacters(messageOf(error))}${hint}\n`);
    return code;
  }
};

// Exit explicitly: a command is over when it returns, whatever timers or sockets a library left behind.
// Exit only once stdout has been flushed: on some systems pipe writes are asynchronous.
main(process.argv.slice(2)).then((code) => process.stdout.write("", () => process.exit(code)));
