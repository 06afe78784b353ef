import { Migration } from "@mikro-orm/migrations";

/**
 * Idempotency keys of creates, per organization. A key is written in the transaction that
 * creates the record, so a crash before the commit leaves neither, and one after leaves both.
 */
export class Migration20261121020000IdempotencyKeys extends Migration {
  override up(): void {
    this.addSql(`
      create table idempotency_keys (
        organization_id bigint not null references organizations (id),
        key text not null,
        request_fingerprint text not null,
        response_status integer not null,
        response_body jsonb not null,
        created_at timestamptz(3) not null default now(),
        primary key (organization_id, key)
      );
      create index idempotency_keys_created_idx on idempotency_keys (created_at);
    `);
  }
}
