import { Migration } from "@mikro-orm/migrations";

/**
 * History retention walks messages by their creation (`webhook_messages_created_at_idx`) and takes
 * their settled deliveries along, so deliveries no longer need an index of their own for it: one
 * index entry fewer written each time a delivery settles.
 */
export class Migration20261124070000RetentionByMessage extends Migration {
  override up(): void {
    this.addSql("drop index webhook_deliveries_settled_idx;");
  }
}
