import { Migration } from "@mikro-orm/migrations";

/**
 * Webhook history partitioned by time (issue #32): `webhook_messages` and `webhook_deliveries` by
 * `created_at`, `webhook_attempts` by a new column `delivery_created_at` (its delivery's, which is its
 * message's: deliveries are written in their message's transaction), so the three tables' partitions
 * share bounds and retention drops them together (`HistoryPartitions`), never deleting rows.
 *
 * Each table is renamed aside, a partitioned table made `like` it (every column, default, identity
 * and check it has, so a column another migration added before this one is carried), its rows copied,
 * its identity sequence carried on, and the old table dropped. Primary keys and uniques must hold the
 * partition key: `(id, created_at)`; the envelope id's unique becomes `(envelope_id, created_at)` (the
 * envelope id is random, so it stays unique; a lookup by it still reads the index's leading column).
 * Deliveries no longer reference messages by a foreign key (a partitioned key would need the time
 * too, and the partitions go together). The messages' `created_at` index, used only by the old
 * row-by-row retention, is not made again. Partitions: one a day (the width at the default
 * retention), from the oldest row's day to 8 days ahead; a history older than 60 days goes into one
 * partition before those. The processes make the next ones (`HistoryPartitions.makeAhead`).
 */
export class Migration20261202000000HistoryByTime extends Migration {
  override up(): void {
    for (const table of ["webhook_messages", "webhook_deliveries", "webhook_attempts"]) {
      this.addSql(`alter table ${table} rename to ${table}_unpartitioned;`);
      // Index and sequence names are the schema's: the new table's are the old ones' names.
      this.addSql(`do $$ declare i record; begin
        for i in select c.relname from pg_index x join pg_class c on c.oid = x.indexrelid where x.indrelid = '${table}_unpartitioned'::regclass loop
          execute format('alter index %I rename to %I', i.relname, left(i.relname, 50) || '_unpartitioned');
        end loop;
      end $$;`);
      this.addSql(`alter sequence ${table}_id_seq rename to ${table}_unpartitioned_id_seq;`);
    }
    this.addSql(`create table webhook_messages (like webhook_messages_unpartitioned including defaults including identity including constraints)
      partition by range (created_at);`);
    this.addSql(`create table webhook_deliveries (like webhook_deliveries_unpartitioned including defaults including identity including constraints)
      partition by range (created_at);`);
    this.addSql(`create table webhook_attempts (like webhook_attempts_unpartitioned including defaults including identity including constraints,
      delivery_created_at timestamptz(3) not null) partition by range (delivery_created_at);`);

    // The partitions: a day each (UTC), from the oldest row's day (or today) to 8 days ahead.
    this.addSql(`do $$ declare
        oldest timestamptz := date_trunc('day', least(now(),
          (select min(created_at) from webhook_messages_unpartitioned), (select min(created_at) from webhook_deliveries_unpartitioned)) at time zone 'UTC') at time zone 'UTC';
        first_day timestamptz := greatest(oldest, (date_trunc('day', now() at time zone 'UTC') at time zone 'UTC') - interval '60 days');
        last_day timestamptz := (date_trunc('day', now() at time zone 'UTC') at time zone 'UTC') + interval '8 days';
        lower timestamptz;
        t text;
      begin
        if oldest < first_day then
          foreach t in array array['webhook_messages', 'webhook_deliveries', 'webhook_attempts'] loop
            execute format('create table %I partition of %I for values from (%L) to (%L)%s',
              t || '_p' || to_char(oldest at time zone 'UTC', 'YYYYMMDDHH24MISS'), t, oldest, first_day,
              case when t = 'webhook_deliveries' then ' with (fillfactor = 50)' else '' end);
          end loop;
        end if;
        lower := first_day;
        while lower < last_day loop
          foreach t in array array['webhook_messages', 'webhook_deliveries', 'webhook_attempts'] loop
            execute format('create table %I partition of %I for values from (%L) to (%L)%s',
              t || '_p' || to_char(lower at time zone 'UTC', 'YYYYMMDDHH24MISS'), t, lower, lower + interval '1 day',
              case when t = 'webhook_deliveries' then ' with (fillfactor = 50)' else '' end);
          end loop;
          lower := lower + interval '1 day';
        end loop;
      end $$;`);

    // The rows, then the indexes (each partition gets them through the parent's).
    this.addSql(`insert into webhook_messages select * from webhook_messages_unpartitioned;`);
    this.addSql(`insert into webhook_deliveries select * from webhook_deliveries_unpartitioned;`);
    this.addSql(`insert into webhook_attempts select a.*, coalesce(d.created_at, a.started_at)
      from webhook_attempts_unpartitioned a left join webhook_deliveries_unpartitioned d on d.id = a.delivery_id;`);
    for (const table of ["webhook_messages", "webhook_deliveries", "webhook_attempts"]) {
      this.addSql(`select setval(pg_get_serial_sequence('${table}', 'id'), s.last_value, s.is_called) from ${table}_unpartitioned_id_seq s;`);
    }
    this.addSql(`drop table webhook_attempts_unpartitioned, webhook_deliveries_unpartitioned, webhook_messages_unpartitioned;`);

    this.addSql(`alter table webhook_messages add constraint webhook_messages_pkey primary key (id, created_at);`);
    this.addSql(`alter table webhook_messages add constraint webhook_messages_envelope_id_created_at_key unique (envelope_id, created_at);`);
    this.addSql(`alter table webhook_messages add constraint webhook_messages_organization_id_fkey foreign key (organization_id) references organizations (id);`);
    this.addSql(`create index webhook_messages_feed_idx on webhook_messages (organization_id, created_at, id);`);

    this.addSql(`alter table webhook_deliveries add constraint webhook_deliveries_pkey primary key (id, created_at);`);
    this.addSql(`alter table webhook_deliveries add constraint webhook_deliveries_message_id_endpoint_id_created_at_key unique (message_id, endpoint_id, created_at);`);
    this.addSql(`alter table webhook_deliveries add constraint webhook_deliveries_organization_id_fkey foreign key (organization_id) references organizations (id);`);
    this.addSql(`alter table webhook_deliveries add constraint webhook_deliveries_endpoint_id_fkey foreign key (endpoint_id) references webhook_endpoints (id);`);
    this.addSql(`create index webhook_deliveries_due_idx on webhook_deliveries (organization_id, endpoint_id, next_attempt_at, id) where status = 'pending' and not via_listener;`);
    this.addSql(`create index webhook_deliveries_listener_due_idx on webhook_deliveries (endpoint_id, next_attempt_at, id) where status = 'pending' and via_listener;`);
    this.addSql(`create index webhook_deliveries_log_idx on webhook_deliveries (organization_id, created_at, id);`);
    this.addSql(`create index webhook_deliveries_endpoint_log_idx on webhook_deliveries (endpoint_id, created_at, id);`);
    this.addSql(`create index webhook_deliveries_failed_idx on webhook_deliveries (endpoint_id, created_at, id) where status = 'failed';`);
    this.addSql(`create trigger webhook_deliveries_notify after insert on webhook_deliveries for each row execute function webhook_deliveries_webhook_deliveries_notify_fn();`);

    this.addSql(`alter table webhook_attempts add constraint webhook_attempts_pkey primary key (id, delivery_created_at);`);
    this.addSql(`create index webhook_attempts_delivery_idx on webhook_attempts (delivery_id, id);`);
    this.addSql(`create index webhook_attempts_health_idx on webhook_attempts (organization_id, started_at);`);
  }
}
