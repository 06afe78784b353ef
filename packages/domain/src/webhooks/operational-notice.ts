import type { WrittenNoticeKind } from "./delivery-decision.ts";

/**
 * Operational webhooks: the operator's own channel (`OPERATOR_WEBHOOK_URL`, signed with
 * `OPERATOR_WEBHOOK_SECRET`), never an organization's endpoint. Their types are not business event
 * types (`WEBHOOK_EVENT_TYPES`): an endpoint cannot subscribe to them, and the API contract's six
 * types are unchanged.
 */

/** An operational webhook's type, one per notice kind. */
export type OperationalEventType = `endpoint.${WrittenNoticeKind}`;

/** Every operational webhook type. */
export const OPERATIONAL_EVENT_TYPES: ReadonlyArray<OperationalEventType> = ["endpoint.failing", "endpoint.disabling_soon", "endpoint.disabled", "endpoint.recovered"];

/** One notice as it is stored and sent. */
export interface OperationalNotice {
  /** The envelope id (`ntc_…`), the same on every retry: receivers deduplicate on it. */
  readonly envelopeId: string;
  readonly kind: WrittenNoticeKind;
  readonly organizationId: number;
  readonly endpointId: number;
  /** The endpoint's URL when the notice was written. */
  readonly endpointUrl: string;
  readonly reason: string;
  /** When the notice was written (ISO 8601, the database's time). */
  readonly at: string;
  /** For `disabling_soon`: when the failure window disables the endpoint unless a delivery succeeds. */
  readonly disablesAt: string | null;
}

/** The operational webhook's type for a notice kind. */
export const operationalEventType = (kind: WrittenNoticeKind): OperationalEventType => `endpoint.${kind}`;

/**
 * The exact bytes of a notice's operational webhook, the same on every retry:
 * `{"id","type","created_at","data":{organization_id, endpoint_id, endpoint_url, reason, at[, disables_at]}}`.
 */
export const operationalEnvelopeBody = (notice: OperationalNotice): string =>
  JSON.stringify({
    id: notice.envelopeId,
    type: operationalEventType(notice.kind),
    created_at: notice.at,
    data: {
      organization_id: notice.organizationId,
      endpoint_id: notice.endpointId,
      endpoint_url: notice.endpointUrl,
      reason: notice.reason,
      at: notice.at,
      ...(notice.disablesAt === null ? {} : { disables_at: notice.disablesAt }),
    },
  });

/** The words of a notice as an organization's developers read it (the Developer area's banner), plain text. */
export const noticeHeadline = (notice: Pick<OperationalNotice, "kind" | "reason" | "disablesAt">): string =>
  notice.kind === "failing"
    ? `This endpoint is failing: ${notice.reason}. Its deliveries wait and are retried; nothing is lost yet.`
    : notice.kind === "recovered"
      ? `This endpoint delivers again: ${notice.reason}.`
    : notice.kind === "disabling_soon"
      ? `This endpoint is about to be disabled at ${notice.disablesAt ?? "the end of its failure window"}: ${notice.reason}.`
      : `This endpoint was disabled because ${notice.reason}. Fix it, then enable it again.`;
