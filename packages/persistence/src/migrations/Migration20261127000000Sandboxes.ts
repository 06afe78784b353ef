import { Migration } from "@mikro-orm/migrations";

/**
 * Sandboxes: an organization may have one linked sandbox organization, which points to it with
 * `sandbox_of` (unique: one sandbox per live organization). A sandbox is an organization like any
 * other (its own keys, endpoints, data); that it has no sandbox of its own is the store's check.
 */
export class Migration20261127000000Sandboxes extends Migration {
  override up(): void {
    this.addSql(`alter table organizations add column sandbox_of bigint unique references organizations (id);`);
  }
}
