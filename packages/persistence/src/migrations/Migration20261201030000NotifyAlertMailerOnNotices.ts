import { Migration } from "@mikro-orm/migrations";

/**
 * Wakes the dispatchers' alert mailers when endpoint notices commit (LISTEN platter_notices, on the
 * connection that listens for deliveries), so an idle mailer polls rarely instead of every second.
 */
export class Migration20261201030000NotifyAlertMailerOnNotices extends Migration {
  override up(): void {
    this.addSql(`
      create function endpoint_notices_endpoint_notices_notify_fn() returns trigger language plpgsql as $body$
      begin
        perform pg_notify('platter_notices', '');
        return null;
      end
      $body$;
      create trigger endpoint_notices_notify after insert on endpoint_notices
        for each row execute function endpoint_notices_endpoint_notices_notify_fn();
    `);
  }
}
