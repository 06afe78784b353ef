import { Migration } from "@mikro-orm/migrations";

/**
 * A Developer-area session shows where it was opened and when it was last used, so its
 * organization can tell its sessions apart and end the ones it does not know: `device_hint` (a few
 * words from the User-Agent at sign-in, never the header itself) and `last_seen_at` (written at
 * most once a minute). Sessions opened before have neither. The audit log's session entries name
 * their session's device, and a filter by actor reads the organization's index as before.
 */
export class Migration20261126000000SessionDevices extends Migration {
  override up(): void {
    this.addSql(`alter table developer_sessions add column device_hint text, add column last_seen_at timestamptz(3);`);
  }
}
