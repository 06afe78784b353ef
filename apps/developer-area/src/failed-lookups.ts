import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { type AddressFailures, addressGroup } from "@platter/ops";
import type { Context } from "koa";
import { TooManyFailedSignIns } from "@platter/domain";

/**
 * Failed session and sign-in link lookups per client address, as the API counts failed keys
 * (`AddressFailures`, `RATE_LIMIT_AUTH_FAILURES` per `RATE_LIMIT_AUTH_FAILURES_WINDOW`, shared
 * with the CLI routes' keys): an address that presented that many unknown, ended or malformed
 * session cookies or sign-in links within the window is answered 429 before anything it sends is
 * looked up, so guessing tokens costs the database nothing. A session cookie this process saw
 * live lately still gets through (an office behind one address is not locked out by one browser
 * guessing); a link never does (a link is used once, so none is "seen live" before).
 */

/** How many live sessions (their tokens' digests) each process remembers, to let them past an address's lock. */
const KNOWN_SESSIONS = 10_000;

const digestOf = (token: string): string => createHash("sha256").update(token).digest("base64url");

/** The failed lookups of one Developer-area process, by client address (`clientAddressResolver`, `TRUST_PROXY`). */
export class FailedLookups {
  private readonly failures: AddressFailures;
  private readonly clientAddress: (request: IncomingMessage) => string;
  /** Digests of session tokens seen live here lately, oldest first. */
  private readonly known = new Map<string, true>();

  constructor(failures: AddressFailures, clientAddress: (request: IncomingMessage) => string) {
    this.failures = failures;
    this.clientAddress = clientAddress;
  }

  /**
   * The request's address group (what its failures are counted under), once it may look
   * something up: `TooManyFailedSignIns` (429) when the address has used up its failures, unless
   * `sessionToken` is of a session seen live here lately.
   */
  async admit(ctx: Context, sessionToken?: string): Promise<string> {
    const address = addressGroup(this.clientAddress(ctx.req));
    if (sessionToken !== undefined && this.known.has(digestOf(sessionToken))) return address;
    const refused = await this.failures.refusal(address);
    if (refused !== undefined) throw new TooManyFailedSignIns({ retryAfterSeconds: refused.retryAfterSeconds });
    return address;
  }

  /** Counts one failed lookup from `address` (and forgets `sessionToken` as a live session). */
  async failed(address: string, sessionToken?: string): Promise<void> {
    if (sessionToken !== undefined) this.known.delete(digestOf(sessionToken));
    await this.failures.failed(address);
  }

  /** Remembers `sessionToken` as a live session's. */
  live(sessionToken: string): void {
    const digest = digestOf(sessionToken);
    this.known.delete(digest);
    this.known.set(digest, true);
    if (this.known.size > KNOWN_SESSIONS) this.known.delete(this.known.keys().next().value!);
  }
}
