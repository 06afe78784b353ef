import { Migration20261121000000Initial } from "./Migration20261121000000Initial.ts";
import { Migration20261121010000Webhooks } from "./Migration20261121010000Webhooks.ts";
import { Migration20261121020000IdempotencyKeys } from "./Migration20261121020000IdempotencyKeys.ts";
import { Migration20261123000000WebhookMessages } from "./Migration20261123000000WebhookMessages.ts";
import { Migration20261123010000SecretRotation } from "./Migration20261123010000SecretRotation.ts";
import { Migration20261123020000HistoryRetention } from "./Migration20261123020000HistoryRetention.ts";
import { Migration20261123030000FairDelivery } from "./Migration20261123030000FairDelivery.ts";
import { Migration20261123040000ProcessInstances } from "./Migration20261123040000ProcessInstances.ts";
import { Migration20261124000000DeveloperArea } from "./Migration20261124000000DeveloperArea.ts";
import { Migration20261124010000DeliveryLog } from "./Migration20261124010000DeliveryLog.ts";
import { Migration20261124050000EndpointHealth } from "./Migration20261124050000EndpointHealth.ts";
import { Migration20261124060000AttemptLogKeys } from "./Migration20261124060000AttemptLogKeys.ts";
import { Migration20261124070000RetentionByMessage } from "./Migration20261124070000RetentionByMessage.ts";
import { Migration20261124080000EndpointOrigins } from "./Migration20261124080000EndpointOrigins.ts";
import { Migration20261124090000BoundedClaims } from "./Migration20261124090000BoundedClaims.ts";
import { Migration20261125000000AuditLog } from "./Migration20261125000000AuditLog.ts";
import { Migration20261125010000KeyWrites } from "./Migration20261125010000KeyWrites.ts";
import { Migration20261125020000KeyLifetimes } from "./Migration20261125020000KeyLifetimes.ts";
import { Migration20261125030000RequestLog } from "./Migration20261125030000RequestLog.ts";
import { Migration20261126000000SessionDevices } from "./Migration20261126000000SessionDevices.ts";
import { Migration20261126010000EndpointNotices } from "./Migration20261126010000EndpointNotices.ts";
import { Migration20261127000000Sandboxes } from "./Migration20261127000000Sandboxes.ts";

/** Every migration, in order. Listed explicitly so bundled and source runs find the same set. */
export const migrationsList = [
  { name: "Migration20261121000000Initial", class: Migration20261121000000Initial },
  { name: "Migration20261121010000Webhooks", class: Migration20261121010000Webhooks },
  { name: "Migration20261121020000IdempotencyKeys", class: Migration20261121020000IdempotencyKeys },
  { name: "Migration20261123000000WebhookMessages", class: Migration20261123000000WebhookMessages },
  { name: "Migration20261123010000SecretRotation", class: Migration20261123010000SecretRotation },
  { name: "Migration20261123020000HistoryRetention", class: Migration20261123020000HistoryRetention },
  { name: "Migration20261123030000FairDelivery", class: Migration20261123030000FairDelivery },
  { name: "Migration20261123040000ProcessInstances", class: Migration20261123040000ProcessInstances },
  { name: "Migration20261124000000DeveloperArea", class: Migration20261124000000DeveloperArea },
  { name: "Migration20261124010000DeliveryLog", class: Migration20261124010000DeliveryLog },
  { name: "Migration20261124050000EndpointHealth", class: Migration20261124050000EndpointHealth },
  { name: "Migration20261124060000AttemptLogKeys", class: Migration20261124060000AttemptLogKeys },
  { name: "Migration20261124070000RetentionByMessage", class: Migration20261124070000RetentionByMessage },
  { name: "Migration20261124080000EndpointOrigins", class: Migration20261124080000EndpointOrigins },
  { name: "Migration20261124090000BoundedClaims", class: Migration20261124090000BoundedClaims },
  { name: "Migration20261125000000AuditLog", class: Migration20261125000000AuditLog },
  { name: "Migration20261125010000KeyWrites", class: Migration20261125010000KeyWrites },
  { name: "Migration20261125020000KeyLifetimes", class: Migration20261125020000KeyLifetimes },
  { name: "Migration20261125030000RequestLog", class: Migration20261125030000RequestLog },
  { name: "Migration20261126000000SessionDevices", class: Migration20261126000000SessionDevices },
  { name: "Migration20261126010000EndpointNotices", class: Migration20261126010000EndpointNotices },
  { name: "Migration20261127000000Sandboxes", class: Migration20261127000000Sandboxes },
];
