import { Cause, Exit, Layer, ManagedRuntime } from "effect";
import { isDatabaseUnavailable } from "./database-availability.ts";
import { ProcessInstances } from "./process-instances.ts";
import { Database, type DatabaseLimits, type DatabaseOptions, pingDatabase } from "./database.ts";
import { DeveloperAuditLog } from "./developer-area/developer-audit-log.ts";
import { DeveloperSessions } from "./developer-area/developer-sessions.ts";
import { Housekeeping } from "./housekeeping.ts";
import { BusinessActions } from "./operator/business-actions.ts";
import { Operator } from "./operator/operator.ts";
import {
  ApiKeyRepository, ClientRepository, DeliveryRepository, EventRepository, InvoiceRepository, OrganizationRepository,
  RecipeRepository, WebhookEndpointRepository,
} from "./repositories/index.ts";
import { Seeding } from "./seed/seeding.ts";
import { DeliveryQueue } from "./webhooks/delivery-queue.ts";

/** Every storage service, on one database. */
export const storageServices = Layer.mergeAll(
  ProcessInstances.layer,
  ApiKeyRepository.layer,
  OrganizationRepository.layer,
  EventRepository.layer,
  RecipeRepository.layer,
  ClientRepository.layer,
  InvoiceRepository.layer,
  WebhookEndpointRepository.layer,
  DeliveryRepository.layer,
  BusinessActions.layer,
  Operator.layer,
  Seeding.layer,
  DeliveryQueue.layer,
  Housekeeping.layer,
  DeveloperSessions.layer,
  DeveloperAuditLog.layer,
);

/** The database and every storage service on it: what a process opens once and its roles share. */
export const persistenceLayer = (options: DatabaseOptions) => storageServices.pipe(Layer.provideMerge(Database.layer(options)));

/** Everything `persistenceLayer` provides. */
export type Persistence = Layer.Success<ReturnType<typeof persistenceLayer>>;

/** The storage services a process opened once at start; its roles run their programs on it. */
export type PlatformRuntime = ManagedRuntime.ManagedRuntime<Persistence, never>;

/**
 * A request's storage program ended: its value, or thrown the expected failure itself (the app's
 * error mapping answers it), `unavailable(failure)` for a database outage (a 503), and any other
 * defect as it is (an opaque 500).
 */
export const requestOutcome = <A, E>(exit: Exit.Exit<A, E>, unavailable: (failure: unknown) => Error): A => {
  if (Exit.isSuccess(exit)) return exit.value;
  const failure = Cause.squash(exit.cause);
  throw isDatabaseUnavailable(failure) ? unavailable(failure) : failure;
};

/** Where the database is and how long to wait on it, as configuration reads them, and this process's pool size. */
export interface PlatformSettings extends DatabaseLimits {
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly localPostgresPort: number;
  readonly poolSize: number;
}

/** What opening the platform may tell its process. */
export interface PlatformEvents {
  /** The embedded server's data directory was created empty. */
  readonly onCreated?: (dataDir: string) => void;
  /** A configured server did not answer yet; another try follows within a second. */
  readonly onWaiting?: (address: string, reason: string) => void;
}

/**
 * Opens the platform a process's roles share: the database (embedded when no URL is configured),
 * one pool, migrations applied, and every storage service on it. `dispose()` closes it all.
 */
export const openPlatform = async (settings: PlatformSettings, events: PlatformEvents = {}): Promise<PlatformRuntime> => {
  const runtime = ManagedRuntime.make(
    persistenceLayer({
      url: settings.databaseUrl,
      dataDir: settings.dataDir,
      localPort: settings.localPostgresPort,
      poolSize: settings.poolSize,
      connectTimeoutMs: settings.connectTimeoutMs,
      statementTimeoutMs: settings.statementTimeoutMs,
      startTimeoutMs: settings.startTimeoutMs,
      migrate: true,
      ...events,
    }),
  );
  try {
    await runtime.runPromise(pingDatabase);
  } catch (error) {
    // Release whatever opened before the failure (an embedded server this call started).
    await runtime.dispose();
    throw error;
  }
  return runtime;
};

/** The platform as a service of a process: its runtime, and a stop that closes it (after the roles on it have stopped). */
export const startPlatform = async (settings: PlatformSettings, events: PlatformEvents = {}) => {
  const runtime = await openPlatform(settings, events);
  return { runtime, stop: () => runtime.dispose() };
};
