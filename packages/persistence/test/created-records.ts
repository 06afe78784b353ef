import type { ClientCreate, EventCreate, OrgScope } from "@platter/domain";
import { Effect } from "effect";
import { ClientRepository, EventRepository, inOneTransaction, WebhookMessages } from "../src/index.ts";

/**
 * Records with their webhook message, for this package's tests of what comes after a change (the
 * deliveries, the dispatcher's claims, retention): the stores composed as the application's
 * `Clients.create` and `Events.create` compose them (the use cases and their tests live in
 * `@platter/application`, which this package cannot import).
 */

/** A new client and its `client.created` message with its deliveries, in one transaction. */
export const createClient = (scope: OrgScope, input: ClientCreate) =>
  inOneTransaction(Effect.gen(function* () {
    const clients = yield* ClientRepository;
    const id = yield* clients.insert(scope, input);
    yield* WebhookMessages.use((messages) => Effect.flatMap(Effect.orDie(clients.read(scope, id)), (data) => messages.record(scope, { type: "client.created", data })));
    return { id };
  }));

/** A new event (no price) and its `event.created` message with its deliveries, in one transaction. */
export const createEvent = (scope: OrgScope, input: Pick<EventCreate, "name">) =>
  inOneTransaction(Effect.gen(function* () {
    const events = yield* EventRepository;
    const id = yield* events.insert(scope, { clientId: null, name: input.name, eventDate: null, guests: null, pricePerHeadMinor: null, eventType: null });
    yield* WebhookMessages.use((messages) => Effect.flatMap(Effect.orDie(events.read(scope, id)), (data) => messages.record(scope, { type: "event.created", data })));
    return { id };
  }));
