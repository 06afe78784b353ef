import type { PageList } from "../pagination.ts";
import type { Transport } from "../transport.ts";
import type { Client, ClientCreate, CreateOptions, Created, ListItem, ListParams, RequestBody } from "../types.ts";
import { createIn, listOf } from "./list-and-create.ts";

/** `platter.clients`: the people and companies the business caters for, by name. */
export class ClientsResource {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** `GET /clients`, every page: iterate with `for await`. */
  list(params?: ListParams): PageList<Client> {
    return listOf<ListItem<"listClients">>(this.#transport, "/clients", params);
  }

  /** `POST /clients` (read/write key): creates a client; answers its `id`. */
  create(input: ClientCreate, options?: CreateOptions): Promise<Created> {
    return createIn<RequestBody<"createClient">>(this.#transport, "/clients", input, options);
  }
}
