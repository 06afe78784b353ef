import { readFile } from "node:fs/promises";
import type {
  Client as DomainClient, ClientCreate as DomainClientCreate, Event as DomainEvent, EventCreate as DomainEventCreate,
  EventDetail as DomainEventDetail, InvoiceDetail as DomainInvoiceDetail, Organization as DomainOrganization,
  RecipeDetail as DomainRecipeDetail, WebhookEnvelope as DomainWebhookEnvelope,
} from "@platter/domain";
import { describe, expect, expectTypeOf, it } from "vitest";
import type {
  Client, ClientCreate, Event, EventCreate, EventDetail, InvoiceDetail, ListItem, Organization, RecipeDetail, RequestBody, ResponseBody,
  WebhookEvent,
} from "../src/types.ts";
import { API_TYPES_PATH, OPENAPI_JSON_PATH, renderApiTypes, renderOpenApiJson } from "../scripts/api-artifacts.ts";

/**
 * One source of types: docs/openapi.json is generated from the domain's Schemas and the SDK types
 * from it. This regenerates both in memory and requires the committed files to be byte-for-byte
 * current, so a change to a resource Schema without `npm run generate -w @platter/sdk` fails here.
 */

/** Deeply mutable: the domain's types are readonly, the generated ones are not; the shapes must agree. */
type Mutable<T> = T extends ReadonlyArray<infer Item> ? Array<Mutable<Item>> : T extends object ? { -readonly [K in keyof T]: Mutable<T[K]> } : T;

describe("generated artifacts", () => {
  it("docs/openapi.json is current with the domain's Schemas", async () => {
    expect(await readFile(OPENAPI_JSON_PATH, "utf8"), "run: npm run generate -w @platter/sdk").toBe(renderOpenApiJson());
  });

  it("src/generated/api-types.ts is current with docs/openapi.json", async () => {
    const committed = await readFile(OPENAPI_JSON_PATH, "utf8");
    expect(await readFile(API_TYPES_PATH, "utf8"), "run: npm run generate -w @platter/sdk").toBe(await renderApiTypes(committed));
  });

  it("describes the ten endpoints and nothing else", () => {
    const document = JSON.parse(renderOpenApiJson());
    const operations = Object.entries(document.paths as Record<string, Record<string, { operationId: string }>>).flatMap(
      ([path, item]) => Object.entries(item).map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation.operationId}`),
    );
    expect(operations).toEqual([
      "GET /me getMe",
      "GET /events listEvents",
      "POST /events createEvent",
      "GET /events/{id} getEvent",
      "GET /recipes listRecipes",
      "GET /recipes/{id} getRecipe",
      "GET /clients listClients",
      "POST /clients createClient",
      "GET /invoices listInvoices",
      "GET /invoices/{id} getInvoice",
    ]);
    expect(document.openapi).toBe("3.1.0");
  });
});

describe("SDK types", () => {
  it("are the domain's types", () => {
    expectTypeOf<Organization>().toEqualTypeOf<Mutable<DomainOrganization>>();
    expectTypeOf<Event>().toEqualTypeOf<Mutable<DomainEvent>>();
    expectTypeOf<EventDetail>().toEqualTypeOf<Mutable<DomainEventDetail>>();
    expectTypeOf<RecipeDetail>().toEqualTypeOf<Mutable<DomainRecipeDetail>>();
    expectTypeOf<Client>().toEqualTypeOf<Mutable<DomainClient>>();
    expectTypeOf<InvoiceDetail>().toEqualTypeOf<Mutable<DomainInvoiceDetail>>();
    expectTypeOf<WebhookEvent>().toEqualTypeOf<Mutable<DomainWebhookEnvelope>>();
    expectTypeOf<EventCreate>().toEqualTypeOf<Mutable<DomainEventCreate>>();
    expectTypeOf<ClientCreate>().toEqualTypeOf<Mutable<DomainClientCreate>>();
  });

  it("are what each operation answers and accepts", () => {
    expectTypeOf<ResponseBody<"getMe", 200>>().toEqualTypeOf<Organization>();
    expectTypeOf<ResponseBody<"getEvent", 200>>().toEqualTypeOf<EventDetail>();
    expectTypeOf<ResponseBody<"getRecipe", 200>>().toEqualTypeOf<RecipeDetail>();
    expectTypeOf<ResponseBody<"getInvoice", 200>>().toEqualTypeOf<InvoiceDetail>();
    expectTypeOf<ResponseBody<"createEvent", 201>>().toEqualTypeOf<{ id: number }>();
    expectTypeOf<ListItem<"listEvents">>().toEqualTypeOf<Event>();
    expectTypeOf<ListItem<"listClients">>().toEqualTypeOf<Client>();
    expectTypeOf<RequestBody<"createEvent">>().toEqualTypeOf<EventCreate>();
    expectTypeOf<RequestBody<"createClient">>().toEqualTypeOf<ClientCreate>();
    expectTypeOf<EventCreate>().toHaveProperty("name").toEqualTypeOf<string>();
  });
});
