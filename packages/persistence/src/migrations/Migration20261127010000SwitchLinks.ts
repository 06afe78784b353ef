import { Migration } from "@mikro-orm/migrations";

/**
 * A sign-in link made to switch a session between a live organization and its sandbox says so
 * (`requested_by = 'switch'`): only a sandbox session opened by such a link may switch back to the
 * live organization.
 */
export class Migration20261127010000SwitchLinks extends Migration {
  override up(): void {
    this.addSql(`
      alter table developer_sign_in_links drop constraint developer_sign_in_links_requested_by_check;
      alter table developer_sign_in_links add constraint developer_sign_in_links_requested_by_check
        check (requested_by in ('cli', 'application', 'switch'));
    `);
  }
}
