import type { Transport } from "../transport.ts";
import type { Organization, ResponseBody } from "../types.ts";

/** `platter.me`: the organization the API key belongs to. */
export class MeResource {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** `GET /me`: the key's organization (`id`, `name`, `currency`, `created_at`). */
  retrieve(): Promise<Organization> {
    return this.#transport.request<ResponseBody<"getMe", 200>>({ method: "GET", path: "/me" });
  }
}
