import { parseEventTypes, readUtcTime } from "@platter/domain";
import { defineCommand } from "citty";
import { Result } from "effect";
import { setTimeout as sleep } from "node:timers/promises";
import { jsonFlag } from "../arguments.ts";
import { connectionOf, DeveloperAreaClient, DeveloperAreaRefused, DeveloperAreaUnavailable, type FeedMessage, type MessagesQuery } from "../developer-area-client.ts";
import { UsageError } from "../failures.ts";
import { note } from "../output.ts";

/**
 * `platter messages tail`: the organization's webhook messages, pulled from the Developer area's
 * feed with an API key (no endpoint needed, nothing inbound), printed oldest first from where it
 * starts (`--after` a cursor, `--since` a time, else the oldest message kept), then each new one as
 * it comes, until Ctrl+C, which prints the cursor to resume from.
 */

/** How often the feed is asked for new messages once it has been read to its end. */
export const TAIL_POLL_MS = 1_000;
/** Backoff while the area is unreachable, 5xx or rate-limiting: from the first to the longest wait, doubling. */
const FIRST_RETRY_MS = 1_000;
const LONGEST_RETRY_MS = 30_000;

/** `--after`, `--since` and `--events` checked before anything connects. */
export const messagesQueryOf = (after: string | undefined, since: string | undefined, events: string | undefined): MessagesQuery => {
  if (after !== undefined && since !== undefined) throw new UsageError("--after and --since: give one place to start (a cursor resumes, a time starts)");
  if (after !== undefined && after.trim() === "") throw new UsageError("--after: give the cursor a message was printed with");
  const sinceTime = since === undefined ? undefined : readUtcTime(since, "--since");
  if (sinceTime !== undefined && Result.isFailure(sinceTime)) throw new UsageError(sinceTime.failure.message);
  const types = parseEventTypes(events ?? "");
  if (Result.isFailure(types)) throw new UsageError(`--events: ${types.failure.message}`);
  return { cursor: after?.trim(), since: sinceTime?.success, eventTypes: types.success };
};

/**
 * Whether a failure is worth waiting out: the area unreachable or 5xx, or its rate limit; never a 503 without Retry-After
 * (`DeveloperAreaMisconfigured`, a refusal: the area's settings, which waiting does not change).
 */
const passing = (error: unknown): error is DeveloperAreaUnavailable | DeveloperAreaRefused =>
  error instanceof DeveloperAreaUnavailable || (error instanceof DeveloperAreaRefused && error.status === 429);

/** Prints the feed from `query` and follows it until a signal (resolves) or a refusal (throws). */
const tail = async (client: DeveloperAreaClient, start: MessagesQuery, json: boolean): Promise<void> => {
  const stopping = new AbortController();
  const onSignal = () => stopping.abort();
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  let query = start;
  let read = false;
  let backoff = FIRST_RETRY_MS;
  const print = (message: FeedMessage) =>
    process.stdout.write(json
      ? `${JSON.stringify({ kind: "message", ...message, envelope: message.body === null ? null : JSON.parse(message.body) })}\n`
      : `${message.created_at}  ${message.type}  ${message.id}  ${message.body ?? "(a payload this version cannot read)"}\n`);
  try {
    while (!stopping.signal.aborted) {
      let wait = TAIL_POLL_MS;
      try {
        const page = await client.messages(query, stopping.signal);
        if (!read) note(`Reading messages ${start.cursor !== undefined ? "after the cursor given" : start.since !== undefined ? `since ${start.since}` : "from the oldest kept"}${start.eventTypes.length === 0 ? "" : ` (${start.eventTypes.join(", ")})`}; following new ones (Ctrl+C stops)`);
        read = true;
        backoff = FIRST_RETRY_MS;
        for (const message of page.data) print(message);
        const last = page.data.at(-1);
        if (last !== undefined) query = { ...query, cursor: last.cursor, since: undefined };
        if (page.has_more) wait = 0;
      } catch (error) {
        if (stopping.signal.aborted) break;
        // Never read yet: a wrong address or key is said at once, not retried forever.
        if (!read || !passing(error)) throw error;
        wait = backoff;
        backoff = Math.min(backoff * 2, LONGEST_RETRY_MS);
        note(`${error.message}; trying again in ${wait / 1000}s`);
      }
      try {
        await sleep(wait, undefined, { signal: stopping.signal });
      } catch {
        break;
      }
    }
    if (query.cursor !== undefined) note(`Stopped. Resume with: platter messages tail --after ${query.cursor}`);
    else note("Stopped.");
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await client.close();
  }
};

const tailCommand = defineCommand({
  meta: {
    name: "tail",
    description: "Print your organization's webhook messages, oldest first, then each new one (Ctrl+C stops and prints the cursor to resume from)",
  },
  args: {
    after: { type: "string", description: "Resume after this cursor (the one printed when a tail stopped, or a message's in --json)" },
    since: { type: "string", description: "Start at the first message made at or after this UTC time, such as 2026-11-28T09:00 (default: the oldest kept)" },
    events: { type: "string", description: "Only these event types, comma-separated (default: every type)" },
    "api-key": { type: "string", description: "The organization's API key (default: PLATTER_API_KEY)" },
    "developer-area-url": { type: "string", description: "The Developer area's origin (default: PLATTER_DEVELOPER_AREA_URL, else http://localhost:3001)" },
    json: { ...jsonFlag, description: "Print one JSON object per message per line (with its cursor and parsed envelope); messages go to stderr" },
  },
  run: async ({ args }) => {
    const query = messagesQueryOf(args.after, args.since, args.events);
    const client = new DeveloperAreaClient(connectionOf(args, "a read/write key of the organization"));
    await tail(client, query, args.json);
  },
});

export const messagesCommand = defineCommand({
  meta: { name: "messages", description: "Pull your organization's webhook messages with an API key (the message feed)" },
  subCommands: { tail: tailCommand },
});
