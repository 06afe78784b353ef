import { Migration } from "@mikro-orm/migrations";

/**
 * Claims cost what they deliver: the due index leads with the organization, so a claim walks a
 * bounded number of organizations and, within each, a bounded number of endpoints, whatever the
 * number with work (the walk is in delivery-queue.ts).
 */
export class Migration20261124090000BoundedClaims extends Migration {
  override up(): void {
    this.addSql(`
      drop index webhook_deliveries_due_idx;
      create index webhook_deliveries_due_idx on webhook_deliveries (organization_id, endpoint_id, next_attempt_at, id) where status = 'pending';
    `);
  }
}
