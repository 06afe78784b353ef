import type { DatabaseUnavailable, NotFound, SignInRequester } from "@platter/domain";
import { DeveloperSessions, type Persistence, type PlatformRuntime } from "@platter/persistence";
import { Operator } from "@platter/persistence/operator";
import { Effect } from "effect";

/**
 * Sign-in links to the Developer area, for whoever may let an organization's developers in: the
 * operator's CLI (`platter developer-area link`, `platter start`), and internal teams (the catering
 * application) through `createSignInLink`. The Developer area only redeems them.
 */

/** A single-use sign-in link and when it stops working. */
export interface SignInLink {
  readonly url: string;
  readonly expires_at: string;
}

/** The address of a link with `token` on the area at `origin`. */
export const signInUrl = (origin: string, token: string): string => `${origin}/sign-in/${token}`;

/** A new link for organization `organizationId` on the area at `origin`; `NotFound` when there is no such organization. */
export const makeSignInLink = (
  origin: string,
  organizationId: number,
  requestedBy: SignInRequester,
): Effect.Effect<SignInLink, NotFound | DatabaseUnavailable, Persistence> =>
  Effect.gen(function* () {
    // The operator's explicit step: a link is for one named organization.
    const scope = yield* Operator.use((operator) => operator.scopeOf(organizationId));
    const link = yield* DeveloperSessions.use((sessions) => sessions.createLink(scope, requestedBy));
    return { url: signInUrl(origin, link.token), expires_at: link.expires_at };
  });

/**
 * For internal teams: a single-use sign-in link (15 minutes) to the Developer area of organization
 * `organizationId`, made on a platform they opened (`openPlatform`). `origin` is the area's public
 * address (`DEVELOPER_AREA_PUBLIC_URL`). Rejects with `NotFound` when there is no such organization.
 */
export const createSignInLink = (
  platform: PlatformRuntime,
  origin: string,
  organizationId: number,
  requestedBy: SignInRequester = "application",
): Promise<SignInLink> => platform.runPromise(makeSignInLink(origin, organizationId, requestedBy));
