import { Migration } from "@mikro-orm/migrations";

/**
 * The Developer area's delivery log: every page of it, and a replay of an endpoint's failed
 * deliveries since a time, is one index range scan.
 *
 * - The organization's log, newest first and bounded by time, reads `(organization_id, created_at, id)`;
 *   it replaces `(organization_id, id)`, whose one reader was the same listing by id, so a delivery
 *   carries as many index entries as before for it.
 * - An endpoint's log reads `(endpoint_id, created_at, id)` (no index led with the endpoint for
 *   settled deliveries).
 * - An endpoint's failed deliveries since a time (the bulk replay, and the log filtered to failed)
 *   read a partial index of failed deliveries only: written once per delivery that runs out of tries.
 */
export class Migration20261124010000DeliveryLog extends Migration {
  override up(): void {
    this.addSql(`
      drop index webhook_deliveries_organization_idx;
      create index webhook_deliveries_log_idx on webhook_deliveries (organization_id, created_at, id);
      create index webhook_deliveries_endpoint_log_idx on webhook_deliveries (endpoint_id, created_at, id);
      create index webhook_deliveries_failed_idx on webhook_deliveries (endpoint_id, created_at, id) where status = 'failed';
    `);
  }
}
