import { Migration } from "@mikro-orm/migrations";

/**
 * Endpoint health in the Developer area: the attempts an organization's endpoints got in the last
 * 24 hours (success rate, last attempt) are one index range scan of `(organization_id, started_at)`,
 * however long the history kept; without it the page would read every attempt kept.
 */
export class Migration20261124050000EndpointHealth extends Migration {
  override up(): void {
    this.addSql(`
      create index webhook_attempts_health_idx on webhook_attempts (organization_id, started_at);
    `);
  }
}
