import { Migration } from "@mikro-orm/migrations";

/**
 * Drops the trigger that NOTIFYed platter_deliveries in each transaction writing deliveries: a
 * notifying transaction holds a lock per database from its commit until its flush, so every
 * create's commit waited behind every other's, whatever its organization. The writer now wakes the
 * dispatchers after its commit (`DELIVERIES_NOTIFY`, coalesced per process).
 */
export class Migration20261204050000WakeDispatchersAfterCommit extends Migration {
  override up(): void {
    this.addSql(`
      drop trigger webhook_deliveries_notify on webhook_deliveries;
      drop function webhook_deliveries_webhook_deliveries_notify_fn();
    `);
  }
}
