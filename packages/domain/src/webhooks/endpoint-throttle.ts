import { Result } from "effect";
import { InvalidInput } from "../errors.ts";
import { ECHOED_INPUT_MAX_CHARACTERS, storableText } from "../storable-text.ts";

/**
 * An endpoint's throttle, set by its organization for a receiver that can take only so much: at
 * most so many deliveries a second to it, across every dispatcher (a token bucket holding one
 * second's deliveries, kept on the endpoint's row by the claim), or none.
 */

/** The highest throttle an endpoint may be given, in deliveries per second (the check on `webhook_endpoints` says the same). */
export const ENDPOINT_THROTTLE_MAX_PER_SECOND = 1000;

/**
 * A throttle as entered: a whole number of deliveries per second from 1 to
 * `ENDPOINT_THROTTLE_MAX_PER_SECOND`, or `none` (or nothing) for no throttle (null).
 */
export const parseEndpointThrottle = (raw: string): Result.Result<number | null, InvalidInput> => {
  const text = raw.trim();
  if (text === "" || text.toLowerCase() === "none") return Result.succeed(null);
  const refuse = () => Result.fail(new InvalidInput({
    message: `A throttle is a whole number of deliveries per second from 1 to ${ENDPOINT_THROTTLE_MAX_PER_SECOND}, or none (got "${storableText(text, ECHOED_INPUT_MAX_CHARACTERS)}")`,
  }));
  if (!/^[0-9]{1,7}$/.test(text)) return refuse();
  const perSecond = Number(text);
  return perSecond >= 1 && perSecond <= ENDPOINT_THROTTLE_MAX_PER_SECOND ? Result.succeed(perSecond) : refuse();
};

/** How a throttle reads on a page or in the CLI: "5 deliveries per second", or "none". */
export const describedThrottle = (perSecond: number | null): string =>
  perSecond === null ? "none" : `${perSecond} ${perSecond === 1 ? "delivery" : "deliveries"} per second`;
