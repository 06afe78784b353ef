import { Result, Schema } from "effect";
import { InvalidInput, InvalidTransition } from "./errors.ts";
import { decodeInput } from "./input.ts";
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from "./webhooks/message.ts";

/**
 * Sandboxes: an organization may have one linked sandbox organization (its own keys,
 * `platter_test_…`, and demo data it can reset), where each of the six event types can be made to
 * happen for real so its receivers get real deliveries. A sandbox has no sandbox of its own.
 */

/** What a sandbox can make happen: every webhook event type. */
export const SANDBOX_TRIGGERS: ReadonlyArray<WebhookEventType> = WEBHOOK_EVENT_TYPES;

/** The name a new sandbox takes from its live organization's. */
export const sandboxName = (liveName: string): string => `${liveName} (sandbox)`;

/** Reads an event type to trigger, or `InvalidInput` naming the field and the choices. */
export const parseSandboxTrigger = (text: string): Result.Result<WebhookEventType, InvalidInput> =>
  (SANDBOX_TRIGGERS as ReadonlyArray<string>).includes(text)
    ? Result.succeed(text as WebhookEventType)
    : Result.fail(new InvalidInput({ message: `type must be one of ${SANDBOX_TRIGGERS.join(", ")}` }));

/** The refusal of a sandbox-only action (reset, trigger) on a live organization. */
export const notASandbox = (): InvalidTransition =>
  new InvalidTransition({ message: "This organization is not a sandbox: only a sandbox's data can be reset or its events triggered" });

/** The refusal of "back to live" for a sandbox session that was not opened by switching from the live organization. */
export const notSwitchedFromLive = (): InvalidTransition =>
  new InvalidTransition({
    message: "This sandbox session was not opened from the live organization: sign in to the live organization with a link of its own",
  });

/** The refusal of a sandbox for a sandbox. */
export const sandboxOfSandbox = (): InvalidTransition =>
  new InvalidTransition({ message: "This organization is a sandbox: a sandbox has no sandbox of its own" });

/** The refusal of a trigger when the demo data has nothing left for it (`what`: "no draft invoice to send"). */
export const nothingLeftToTrigger = (what: string): InvalidTransition =>
  new InvalidTransition({ message: `The sandbox has ${what}. Reset the sandbox's data to make more.` });

/** `POST /cli/trigger`'s body (`platter trigger <type>` with a key): `{"type": "<event type>"}`. */
const TriggerBody = Schema.Struct({
  type: Schema.String.annotate({ message: "type must be a string" }).annotateKey({ messageMissingKey: "type is required" }),
});

/** Reads a trigger request's JSON body: the event type, or `InvalidInput` naming the field. */
export const parseTriggerBody = (body: unknown): Result.Result<WebhookEventType, InvalidInput> =>
  Result.flatMap(decodeInput(TriggerBody, body), (request) => parseSandboxTrigger(request.type));
