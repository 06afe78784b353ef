import type { PageList } from "../pagination.ts";
import type { Transport } from "../transport.ts";
import type { CreateOptions, Created, Event, EventCreate, EventDetail, ListItem, ListParams, RequestBody, ResponseBody } from "../types.ts";
import { createIn, listOf, recordPath } from "./list-and-create.ts";

/** `platter.events`: catered occasions, newest first. */
export class EventsResource {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** `GET /events`, every page: iterate with `for await`. */
  list(params?: ListParams): PageList<Event> {
    return listOf<ListItem<"listEvents">>(this.#transport, "/events", params);
  }

  /** `GET /events/{id}`: one event with its dishes. */
  retrieve(id: number): Promise<EventDetail> {
    return this.#transport.request<ResponseBody<"getEvent", 200>>({ method: "GET", path: recordPath("/events", id) });
  }

  /** `POST /events` (read/write key): creates an event; answers its `id`. */
  create(input: EventCreate, options?: CreateOptions): Promise<Created> {
    return createIn<RequestBody<"createEvent">>(this.#transport, "/events", input, options);
  }
}
