import type { PageList } from "../pagination.ts";
import type { Transport } from "../transport.ts";
import type { Invoice, InvoiceDetail, ListItem, ListParams, ResponseBody } from "../types.ts";
import { listOf, recordPath } from "./list-and-create.ts";

/** `platter.invoices`: bills with computed totals, newest first. */
export class InvoicesResource {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** `GET /invoices`, every page: iterate with `for await`. */
  list(params?: ListParams): PageList<Invoice> {
    return listOf<ListItem<"listInvoices">>(this.#transport, "/invoices", params);
  }

  /** `GET /invoices/{id}`: one invoice with its line items. */
  retrieve(id: number): Promise<InvoiceDetail> {
    return this.#transport.request<ResponseBody<"getInvoice", 200>>({ method: "GET", path: recordPath("/invoices", id) });
  }
}
