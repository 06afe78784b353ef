import { defineEntity, p } from "@mikro-orm/postgresql";
import { identityId } from "./columns.ts";
import { OrganizationEntity } from "./organization.entity.ts";

/**
 * The request log: an organization's API requests (every 4xx and 5xx, a sample of the successes),
 * written by the API in batches off the request path; partitioned by `at` (`REQUEST_HISTORY`), each
 * partition dropped whole once past the retention.
 */
export const ApiRequestEntity = defineEntity({
  name: "ApiRequest",
  tableName: "api_requests",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    /** The key that made the request: a number only, kept after an ended key is removed (the page then says "Key N"). */
    apiKeyId: p.bigint("number"),
    /** When the request arrived; the partition key (Migration20261203000000RequestLogByTime), so part of the primary key. */
    at: p.datetime(3).primary(),
    method: p.text(),
    /** The endpoint's pattern (`/v1/events/:id`). */
    route: p.text(),
    status: p.integer(),
    durationMs: p.double(),
    requestId: p.text(),
    /** The error's text of a 4xx or 5xx. */
    error: p.text().nullable(),
  },
  indexes: [
    { name: "api_requests_organization_idx", expression: "create index api_requests_organization_idx on api_requests (organization_id, at desc, id desc)" },
    { name: "api_requests_request_idx", expression: "create index api_requests_request_idx on api_requests (organization_id, request_id)" },
  ],
});
