import { Migration } from "@mikro-orm/migrations";

/**
 * The trace context of the request that created a message (its W3C `traceparent`, null when the
 * process that wrote it traces nothing): the dispatcher starts each attempt's span as a child of
 * it, so one trace shows a create and every delivery of it. Bounded by its format (55 characters).
 */
export class Migration20261201010000MessageTraceContext extends Migration {
  override up(): void {
    this.addSql(`
      alter table webhook_messages
        add column traceparent text null,
        add constraint webhook_messages_traceparent_check check (traceparent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');
    `);
  }
}
