import { WebhookEndpoints } from "@platter/application";
import { describedThrottle, ENDPOINT_THROTTLE_MAX_PER_SECOND, parseEndpointThrottle } from "@platter/domain";
import { defineCommand } from "citty";
import { Result } from "effect";
import { givenId, idArgument, jsonFlag } from "../arguments.ts";
import { loadCliConfig } from "../config.ts";
import { inOwnerOf, runAction, withPlatform } from "../database-session.ts";
import { UsageError } from "../failures.ts";
import { report } from "../output.ts";

/**
 * `platter webhook throttle --id N --per-second 5` (or `--none`; the id may also be given alone, `throttle N …`): at most so many deliveries a
 * second to an endpoint, across every dispatcher; audited as the operator's.
 */
export const throttleCommand = defineCommand({
  meta: {
    name: "throttle",
    description: `Throttle an endpoint to at most --per-second deliveries a second (1 to ${ENDPOINT_THROTTLE_MAX_PER_SECOND}) across every dispatcher, or --none`,
  },
  args: {
    id: idArgument("Endpoint id"),
    "per-second": { type: "string", description: `Deliveries per second, 1 to ${ENDPOINT_THROTTLE_MAX_PER_SECOND}` },
    none: { type: "boolean", description: "Remove the throttle" },
    json: jsonFlag,
  },
  run: async ({ args }) => {
    const id = givenId(args);
    const perSecondArg = args["per-second"];
    if ((perSecondArg === undefined) === (args.none !== true)) throw new UsageError("Give either --per-second N or --none");
    const perSecond = args.none === true ? Result.succeed(null) : parseEndpointThrottle(perSecondArg ?? "");
    if (Result.isFailure(perSecond)) throw new UsageError(perSecond.failure.message);
    if (args.none !== true && perSecond.success === null) throw new UsageError("Give --per-second a number, or --none to remove the throttle");
    const result = await withPlatform(loadCliConfig(), (platform) =>
      runAction(
        platform,
        inOwnerOf("webhook_endpoints", id, (operator) => WebhookEndpoints.setThrottle(operator, id, perSecond.success)),
        `endpoint ${id} does not exist`,
      ),
    );
    report(args.json, { id: result.id, throttle_per_second: result.after }, `endpoint ${id} throttle: ${describedThrottle(result.after)}`);
  },
});
