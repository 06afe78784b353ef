import { errorAnswer, type PlatterError } from "@platter/domain";
import { ConfigError } from "@platter/ops";

/**
 * How commands fail. Every failure ends the command with its message on stderr and nothing on
 * stdout; the exit code tells a script whether it called the CLI wrongly (2) or the action failed (1).
 */

/** The command was called wrongly: a missing or malformed argument, or a value the domain refuses. */
export class UsageError extends Error {}

/** A well-formed request the organization may not make (a limit reached): exit 2 like a usage error, without pointing at the help. */
export class LimitReached extends UsageError {}

/** The action could not be done (an unknown organization or key). */
export class CommandFailed extends Error {}

/** citty's own argument errors (`Missing required argument`, `Unknown command`) carry this name. */
const isCittyUsageError = (error: unknown): error is Error => error instanceof Error && error.name === "CLIError";

export const exitCodeOf = (error: unknown): 1 | 2 =>
  error instanceof UsageError || error instanceof ConfigError || isCittyUsageError(error) ? 2 : 1;

export const messageOf = (error: unknown): string => {
  if (error instanceof ConfigError) return `configuration error: ${error.message}`;
  if (error instanceof Error) return error.message;
  return String(error);
};

/**
 * The CLI's edge of the error catalogue: an expected error as the failure a command ends with, its
 * line the catalogue's text (`notFound` says what was missing, for `NotFound`) and its exit code
 * the catalogue's kind: `input` a usage error (2, with the help hint), `limit` a limit reached (2),
 * `refusal` and `outage` a failed command (1).
 */
export const failureOf = (error: PlatterError, notFound?: string): Error => {
  const answer = errorAnswer(error);
  const line = error._tag === "NotFound" && notFound !== undefined ? notFound : answer.text;
  switch (answer.kind) {
    case "input":
      return new UsageError(line);
    case "limit":
      return new LimitReached(line);
    case "refusal":
    case "outage":
      return new CommandFailed(line);
  }
};
