import { Migration } from "@mikro-orm/migrations";

/**
 * Bounded delivery history: settled deliveries (with their attempts) and their messages are
 * removed once older than the retention window, in small batches found through these indexes.
 */
export class Migration20261123020000HistoryRetention extends Migration {
  override up(): void {
    this.addSql(`
      create index webhook_deliveries_settled_idx on webhook_deliveries (completed_at) where status <> 'pending';
      create index webhook_deliveries_message_idx on webhook_deliveries (message_id);
      create index webhook_messages_fanned_out_idx on webhook_messages (fanned_out_at) where fanned_out_at is not null;
    `);
  }
}
