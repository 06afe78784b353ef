import {
  type Actor, type ClientCreate, type Created, currencyExponent, type EventCreate, type IdempotencyRequest,
  InvalidInput, orDieButOutage, type OrgScope, toMinorUnits,
} from "@platter/domain";
import { ClientRepository, EventRepository, IdempotencyKeys, inOneTransaction, WebhookMessages } from "@platter/persistence";
import { Effect } from "effect";

/**
 * The API's creates: each record with its webhook message (`client.created`, `event.created`), once
 * per Idempotency-Key, in one transaction. The actor is the key that authenticated the request
 * (`apiKeyActor`). Business records write no audit row: their record is the webhook message.
 */

/**
 * Runs `create` (the record's insert and its message) in one transaction, once per key when
 * `idempotency` is given: the key is taken and checked first, and stored with the new id in the
 * same transaction, so a replay answers the first create's id and a failed create stores no key.
 */
const createOnce = <E, R>(
  scope: OrgScope,
  idempotency: IdempotencyRequest | undefined,
  create: Effect.Effect<number, E, R>,
) =>
  inOneTransaction(Effect.gen(function* () {
    const keys = yield* IdempotencyKeys;
    const earlier = idempotency === undefined ? undefined : yield* keys.earlier(scope, idempotency);
    if (earlier !== undefined) return { id: earlier, replayed: true } satisfies Created;
    const id = yield* create;
    if (idempotency !== undefined) yield* keys.remember(scope, idempotency, id);
    return { id, replayed: false } satisfies Created;
  }));

/** A price per head in the organization's currency as minor units; `InvalidInput` for more decimals than it has. */
const pricePerHeadMinor = (input: EventCreate, currency: string): Effect.Effect<number | null, InvalidInput> => {
  if (input.price_per_head === undefined || input.price_per_head === null) return Effect.succeed(null);
  const minor = toMinorUnits(input.price_per_head, currency);
  return minor === undefined
    ? Effect.fail(new InvalidInput({ message: `price_per_head has more decimal places than ${currency} allows (${currencyExponent(currency)})` }))
    : Effect.succeed(minor);
};

/** Clients created through the API. */
export const Clients = {
  /** A new client and its `client.created` message, once per Idempotency-Key (`Created.replayed` on a repeat). */
  create: (actor: Actor, input: ClientCreate, idempotency?: IdempotencyRequest) =>
    createOnce(actor.scope, idempotency, Effect.gen(function* () {
      const clients = yield* ClientRepository;
      const id = yield* clients.insert(actor.scope, input);
      const client = yield* orDieButOutage(clients.read(actor.scope, id));
      yield* WebhookMessages.use((messages) => messages.record(actor.scope, { type: "client.created", data: client }));
      return id;
    })),
};

/** Events created through the API. */
export const Events = {
  /**
   * A new event in `inquiry` status and its `event.created` message, once per Idempotency-Key;
   * `InvalidInput` (nothing written) for a price with more decimals than the organization's currency has.
   */
  create: (actor: Actor, input: EventCreate, idempotency?: IdempotencyRequest) =>
    Effect.flatMap(pricePerHeadMinor(input, actor.scope.currency), (priceMinor) =>
      createOnce(actor.scope, idempotency, Effect.gen(function* () {
        const events = yield* EventRepository;
        const id = yield* events.insert(actor.scope, {
          clientId: null, name: input.name, eventDate: input.event_date ?? null, guests: input.guests ?? null,
          pricePerHeadMinor: priceMinor, eventType: input.event_type ?? null,
        });
        const event = yield* orDieButOutage(events.read(actor.scope, id));
        yield* WebhookMessages.use((messages) => messages.record(actor.scope, { type: "event.created", data: event }));
        return id;
      }))),
};
