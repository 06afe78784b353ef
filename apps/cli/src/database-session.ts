import { userInfo } from "node:os";
import {
  type ApiKeyLimitReached, type EndpointLimitReached, type EndpointUrlTaken, type EndpointUrlRefused, type InvalidInput, type InvalidTransition, type NotFound, type OperatorActor,
  type SecretKeyUnavailable,
  operatorActor,
} from "@platter/domain";
import { type DatabaseSettings } from "@platter/ops";
import { openPlatform, type Persistence, type PlatformRuntime } from "@platter/persistence";
import { Operator, type OwnedRecord } from "@platter/persistence/operator";
import { Cause, Effect, Exit } from "effect";
import { CommandFailed, LimitReached, UsageError } from "./failures.ts";
import { note } from "./output.ts";

/**
 * The database a command works on: `DATABASE_URL`, else the local embedded server (joined when
 * `npm start` or another command already runs it, started and afterwards stopped otherwise).
 */

/** Opens the platform for one command (a small pool, migrations applied), runs `work`, closes all it opened. */
export const withPlatform = async <T>(config: DatabaseSettings, work: (platform: PlatformRuntime) => Promise<T>): Promise<T> => {
  // PLATTER_DATA_DIR is relative to where the command runs: say so when that made an empty database.
  const platform = await openPlatform({ ...config, poolSize: 4 }, {
    onCreated: (dataDir) => note(`platter: created a new local database in ${dataDir}`),
    onWaiting: (address, reason) => note(`platter: waiting for the database at ${address} (${reason})`),
  });
  try {
    return await work(platform);
  } finally {
    await platform.dispose();
  }
};

type ActionError =
  | InvalidInput | NotFound | InvalidTransition | EndpointLimitReached | ApiKeyLimitReached | EndpointUrlRefused | EndpointUrlTaken | SecretKeyUnavailable;

/**
 * Runs one command's storage program. Its expected failures become CLI failures: `InvalidInput`,
 * `EndpointUrlRefused` and `EndpointUrlTaken` a usage error with the domain's message, `NotFound` a failure saying what
 * was missing, `InvalidTransition` a failure with the domain's message, `EndpointLimitReached` and `ApiKeyLimitReached` a
 * usage error (exit 2: the request is one the organization may not make) with the domain's message,
 * `SecretKeyUnavailable` a failure saying which key `SECRET_ENCRYPTION_KEYS` lacks.
 */
export const runAction = async <A>(platform: PlatformRuntime, program: Effect.Effect<A, ActionError, Persistence>, notFound: string): Promise<A> => {
  const exit = await platform.runPromiseExit(program);
  if (Exit.isSuccess(exit)) return exit.value;
  const error = Cause.squash(exit.cause) as ActionError | Error;
  switch ((error as { _tag?: string })._tag) {
    case "InvalidInput":
    case "EndpointUrlRefused":
    case "EndpointUrlTaken":
      throw new UsageError((error as InvalidInput | EndpointUrlRefused | EndpointUrlTaken).message);
    case "EndpointLimitReached":
    case "ApiKeyLimitReached":
      throw new LimitReached((error as EndpointLimitReached | ApiKeyLimitReached).message);
    case "NotFound":
      throw new CommandFailed(notFound);
    case "InvalidTransition":
    case "SecretKeyUnavailable":
      throw new CommandFailed((error as InvalidTransition | SecretKeyUnavailable).message);
  }
  throw error;
};

/**
 * Who the audit log says made a command's changes: the operating-system user who ran it (the
 * database's own roles are not people), or `USER` when the system has no entry for the process's uid.
 */
const operatorName = (): string => {
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    user = process.env["USER"];
  }
  return `${user ?? "an unknown user"} via the CLI`;
};

/** The operator acting on organization `id`: the explicit step before acting on its data. */
export const inOrganization = <A, E, R>(id: number, work: (operator: OperatorActor) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(Operator.use((operator) => operator.scopeOf(id)), (scope) => work(operatorActor(scope, operatorName())));

/** The operator acting on the organization owning record `id` of `table`. */
export const inOwnerOf = <A, E, R>(table: OwnedRecord, id: number, work: (operator: OperatorActor) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(Operator.use((operator) => operator.scopeOfRecord(table, id)), (scope) => work(operatorActor(scope, operatorName())));
