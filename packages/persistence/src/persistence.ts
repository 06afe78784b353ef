import { type SecretKey, ShuttingDown } from "@platter/domain";
import { Cause, Effect, Exit, type Fiber, Layer, ManagedRuntime, Result, Tracer } from "effect";
import { ProcessInstances } from "./process-instances.ts";
import { Database, type DatabaseConnection, type DatabaseLimits, type DatabaseOptions, pingDatabase } from "./database.ts";
import { AuditLog } from "./audit-log.ts";
import { DeveloperSessions } from "./developer-area/developer-sessions.ts";
import { Housekeeping } from "./housekeeping.ts";
import { HistoryPartitions } from "./history-partitions.ts";
import { BusinessRecords } from "./operator/business-records.ts";
import { Operator } from "./operator/operator.ts";
import { StoredSecretsResealing } from "./operator/stored-secrets-resealing.ts";
import {
  ApiKeyRepository, ClientRepository, DeliveryRepository, EventRepository, IdempotencyKeys, InvoiceRepository, OrganizationRepository,
  RecipeRepository, WebhookEndpointRepository, WebhookMessages,
} from "./repositories/index.ts";
import { RequestLog } from "./request-log.ts";
import { Sandboxes } from "./sandbox/sandboxes.ts";
import { DeliveryQueue } from "./webhooks/delivery-queue.ts";
import { AlertRecipientStore } from "./alerts/alert-recipients.ts";
import { LocalListeners } from "./webhooks/local-listeners.ts";

/**
 * The stores of a process that serves organizations' requests (the API, the Developer area): their
 * data through the scopes authentication makes, Developer-area sessions, the audit log, and upkeep;
 * local listeners (`platter listen`, served by the Developer area through the application's `LocalForwarding`);
 * and sandboxes with their business actions, which only the application's `Sandbox` service calls
 * (lint keeps both out of the API's and the Developer area's own code).
 */
export const requestStorage = Layer.mergeAll(
  ProcessInstances.layer,
  ApiKeyRepository.layer,
  OrganizationRepository.layer,
  EventRepository.layer,
  RecipeRepository.layer,
  ClientRepository.layer,
  IdempotencyKeys.layer,
  WebhookMessages.layer,
  InvoiceRepository.layer,
  WebhookEndpointRepository.layer,
  DeliveryRepository.layer,
  Housekeeping.layer,
  HistoryPartitions.layer,
  DeveloperSessions.layer,
  AuditLog.layer,
  RequestLog.layer,
  Sandboxes.layer,
  BusinessRecords.layer,
  LocalListeners.layer,
  AlertRecipientStore.layer,
);

/** The dispatcher's stores: the delivery queue (every organization's), and upkeep. */
export const dispatcherStorage = Layer.mergeAll(ProcessInstances.layer, DeliveryQueue.layer, Housekeeping.layer, HistoryPartitions.layer);

/** Every storage service: the operator's (scopes from ids, business transitions, resealing secrets) besides the others. */
export const storageServices = Layer.mergeAll(requestStorage, dispatcherStorage, Operator.layer, StoredSecretsResealing.layer);

/** The database and the `storage` services on it: what a process opens once and its roles share. */
const platformLayer = <S>(options: DatabaseOptions, storage: Layer.Layer<S, never, Database>) =>
  storage.pipe(Layer.provideMerge(Database.layer(options)));

/** `platformLayer` with `tracer` as every program's tracer (the runtime's context carries it to each fiber forked on it). */
const tracedPlatformLayer = <S>(options: DatabaseOptions, storage: Layer.Layer<S, never, Database>, tracer: Tracer.Tracer | undefined) =>
  tracer === undefined ? platformLayer(options, storage) : platformLayer(options, storage).pipe(Layer.provideMerge(Layer.succeed(Tracer.Tracer, tracer)));

/** The database and every storage service on it (the CLI, `platter start`, tests). */
export const persistenceLayer = (options: DatabaseOptions) => platformLayer(options, storageServices);

/** Everything `persistenceLayer` provides. */
export type Persistence = Layer.Success<ReturnType<typeof persistenceLayer>>;

/** What a process serving requests may use (`requestStorage` and the database under it). */
export type RequestStorage = Layer.Success<typeof requestStorage> | Database;

/** A platform a process serving requests runs its programs on: no operator's store, no delivery queue. */
export type RequestRuntime = ManagedRuntime.ManagedRuntime<RequestStorage, never>;

/**
 * Forks one request's program in the runtime's context (`Effect.runForkWith`). `runtime.runFork`
 * would also enter the fiber in the runtime's scope, to interrupt it on disposal: a Map entry per
 * request, and a Map's outgrown tables keep later entries (the fiber, its result) alive through
 * young collections (docs/conventions.md). A request's fiber ends with its request, which a
 * server's close waits for.
 */
export const forkRequest = <A, E, R>(runtime: ManagedRuntime.ManagedRuntime<R, never>, program: Effect.Effect<A, E, R>): Fiber.Fiber<A, E> => {
  const context = runtime.cachedContext;
  return context === undefined ? runtime.runFork(program) : Effect.runForkWith(context)(program);
};

/** One request's program run to its end (`forkRequest`): its exit. */
export const runRequest = <A, E, R>(runtime: ManagedRuntime.ManagedRuntime<R, never>, program: Effect.Effect<A, E, R>): Promise<Exit.Exit<A, E>> =>
  new Promise((settle) => void forkRequest(runtime, program).addObserver(settle));

/** What the dispatcher process may use (`dispatcherStorage` and the database under it). */
export type DispatcherStorage = Layer.Success<typeof dispatcherStorage> | Database;

/** A platform the dispatcher runs on. */
export type DispatcherRuntime = ManagedRuntime.ManagedRuntime<DispatcherStorage, never>;

/** The storage services a process opened once at start; its roles run their programs on it. */
export type PlatformRuntime = ManagedRuntime.ManagedRuntime<Persistence, never>;

/**
 * A request's storage program ended: its value, or thrown what its Cause says, read as effect's
 * `HttpServerError.causeResponse` reads one: the expected failure itself (the error catalogue
 * answers it; a database outage is one, the driver's typed `DatabaseUnavailable`, a 503); else a
 * defect as it is (an opaque 500, or `DatabaseUnavailable` when a caller made an outage a defect);
 * else, a Cause of interruptions only, `ShuttingDown` (a 503 saying so): never a defect squashed
 * from an interruption.
 */
export const requestOutcome = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isSuccess(exit)) return exit.value;
  const failure = Cause.findError(exit.cause);
  if (Result.isSuccess(failure)) throw failure.success;
  const defect = Cause.findDefect(exit.cause);
  // A typed outage a caller turned into a defect (`Effect.orDie` on a read that must find its row) is still one.
  if (Result.isSuccess(defect)) throw defect.success;
  throw new ShuttingDown();
};

/** Where the database is and how long to wait on it, as configuration reads them, and this process's pool size. */
export interface PlatformSettings extends DatabaseLimits, DatabaseConnection {
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly localPostgresPort: number;
  readonly poolSize: number;
  /** The keys stored secrets are sealed with (`DatabaseOptions.secretKeys`): required with a `databaseUrl`. */
  readonly secretKeys: ReadonlyArray<SecretKey> | undefined;
  /**
   * The tracer spans are exported through (OTEL_EXPORTER_OTLP_ENDPOINT, `startTraceExport` of
   * `@platter/ops`): every program on the platform runs under it, and each statement gets a span.
   * Without one no tracer is installed and no span is made.
   */
  readonly tracer?: Tracer.Tracer | undefined;
}

/** What opening the platform may tell its process. */
export interface PlatformEvents {
  /** The embedded server's data directory was created empty. */
  readonly onCreated?: (dataDir: string) => void;
  /** A configured server did not answer yet; another try follows within a second. */
  readonly onWaiting?: (address: string, reason: string) => void;
  /** A replica left the reads or came back (see `DatabaseOptions.onReplica`). */
  readonly onReplica?: DatabaseOptions["onReplica"];
}

/**
 * Opens the platform a process's roles share: the database (embedded when no URL is configured),
 * one pool, migrations applied, and the `storage` services on it (every one by `openPlatform`).
 * `dispose()` closes it all.
 */
const openPlatformWith = async <S>(
  storage: Layer.Layer<S, never, Database>, settings: PlatformSettings, events: PlatformEvents = {},
): Promise<ManagedRuntime.ManagedRuntime<S | Database, never>> => {
  const runtime = ManagedRuntime.make(
    tracedPlatformLayer({
      url: settings.databaseUrl,
      dataDir: settings.dataDir,
      localPort: settings.localPostgresPort,
      poolSize: settings.poolSize,
      connectTimeoutMs: settings.connectTimeoutMs,
      statementTimeoutMs: settings.statementTimeoutMs,
      startTimeoutMs: settings.startTimeoutMs,
      ...(settings.pooler === undefined ? {} : { pooler: settings.pooler }),
      ...(settings.preparedStatements === undefined ? {} : { preparedStatements: settings.preparedStatements }),
      ...(settings.genericPlans === undefined ? {} : { genericPlans: settings.genericPlans }),
      listenUrl: settings.listenUrl,
      replicas: settings.replicas,
      migrate: true,
      secretKeys: settings.secretKeys,
      statementSpans: settings.tracer !== undefined,
      ...events,
    }, storage, settings.tracer),
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

/** The platform with every storage service (the CLI and `platter start`, whose roles share one). */
export const openPlatform = (settings: PlatformSettings, events: PlatformEvents = {}): Promise<PlatformRuntime> =>
  openPlatformWith(storageServices, settings, events);

/** The platform as a service of a process: its runtime, and a stop that closes it (after the roles on it have stopped). */
export const startPlatform = async <S>(storage: Layer.Layer<S, never, Database>, settings: PlatformSettings, events: PlatformEvents = {}) => {
  const runtime = await openPlatformWith(storage, settings, events);
  return { runtime, stop: () => runtime.dispose() };
};
