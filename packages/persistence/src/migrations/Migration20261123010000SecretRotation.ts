import { Migration } from "@mikro-orm/migrations";

/**
 * Secret rotation without downtime: after a rotation the previous signing secret keeps signing
 * (beside the new one, in `webhook-signature`) until `previous_secret_until`.
 */
export class Migration20261123010000SecretRotation extends Migration {
  override up(): void {
    this.addSql(`
      alter table webhook_endpoints add column previous_secret text, add column previous_secret_until timestamptz(3);
    `);
  }
}
