import { Migration } from "@mikro-orm/migrations";

/**
 * The message feed (`GET /cli/messages`) reads an organization's messages oldest first from a
 * cursor: one range of this index per page.
 */
export class Migration20261130050000MessageFeedOrder extends Migration {
  override up(): void {
    this.addSql(`create index if not exists webhook_messages_feed_idx on webhook_messages (organization_id, created_at, id);`);
  }
}
