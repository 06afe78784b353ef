import { Layer } from "effect";
import type { Orm } from "../database.ts";
import { ClientRepositoryLive } from "./client.repository.ts";
import { EventRepositoryLive } from "./event.repository.ts";
import { InvoiceRepositoryLive } from "./invoice.repository.ts";
import { ApiKeyRepositoryLive, OrganizationRepositoryLive } from "./organization.repository.ts";
import { RecipeRepositoryLive } from "./recipe.repository.ts";

export * from "./client.repository.ts";
export * from "./event.repository.ts";
export * from "./idempotent-create.ts";
export * from "./invoice.repository.ts";
export * from "./organization.repository.ts";
export * from "./outbox.ts";
export * from "./recipe.repository.ts";

/** Every repository port of the domain, implemented on one ORM. */
export const repositoriesLayer = (orm: Orm) =>
  Layer.mergeAll(
    ApiKeyRepositoryLive(orm),
    OrganizationRepositoryLive(orm),
    EventRepositoryLive(orm),
    RecipeRepositoryLive(orm),
    ClientRepositoryLive(orm),
    InvoiceRepositoryLive(orm),
  );
