import { Migration } from "@mikro-orm/migrations";

/**
 * The request log partitioned by time (issue #32): `api_requests` by `at`, so retention drops whole
 * partitions (`HistoryPartitions`, family `REQUEST_HISTORY`) instead of deleting rows, the same way as
 * Migration20261202000000HistoryByTime moved webhook history.
 *
 * The table is renamed aside, a partitioned table made `like` it (every column, default, identity and
 * check), its rows copied, its identity sequence carried on, and the old table dropped. The primary key
 * holds the partition key: `(id, at)`. The `at` index, used only by the old row-by-row retention, is not
 * made again. Partitions: one a day (the width at the default retention), from the oldest row's day (at
 * the latest yesterday's, for requests written just before a day's turn) to 8 days ahead; a log older
 * than 60 days goes into one partition before those. The API makes the next ones (`HistoryPartitions.makeAhead`).
 */
export class Migration20261203000000RequestLogByTime extends Migration {
  override up(): void {
    this.addSql(`alter table api_requests rename to api_requests_unpartitioned;`);
    // Index and sequence names are the schema's: the new table's are the old ones' names.
    this.addSql(`do $$ declare i record; begin
      for i in select c.relname from pg_index x join pg_class c on c.oid = x.indexrelid where x.indrelid = 'api_requests_unpartitioned'::regclass loop
        execute format('alter index %I rename to %I', i.relname, left(i.relname, 50) || '_unpartitioned');
      end loop;
    end $$;`);
    this.addSql(`alter sequence api_requests_id_seq rename to api_requests_unpartitioned_id_seq;`);
    this.addSql(`create table api_requests (like api_requests_unpartitioned including defaults including identity including constraints)
      partition by range (at);`);

    this.addSql(`do $$ declare
        today timestamptz := date_trunc('day', now() at time zone 'UTC') at time zone 'UTC';
        oldest timestamptz := date_trunc('day', least(now() - interval '1 day', (select min(at) from api_requests_unpartitioned)) at time zone 'UTC') at time zone 'UTC';
        first_day timestamptz := greatest(oldest, today - interval '60 days');
        last_day timestamptz := today + interval '8 days';
        lower timestamptz;
      begin
        if oldest < first_day then
          execute format('create table %I partition of api_requests for values from (%L) to (%L)',
            'api_requests_p' || to_char(oldest at time zone 'UTC', 'YYYYMMDDHH24MISS'), oldest, first_day);
        end if;
        lower := first_day;
        while lower < last_day loop
          execute format('create table %I partition of api_requests for values from (%L) to (%L)',
            'api_requests_p' || to_char(lower at time zone 'UTC', 'YYYYMMDDHH24MISS'), lower, lower + interval '1 day');
          lower := lower + interval '1 day';
        end loop;
      end $$;`);

    // The rows, then the indexes (each partition gets them through the parent's).
    this.addSql(`insert into api_requests select * from api_requests_unpartitioned;`);
    this.addSql(`select setval(pg_get_serial_sequence('api_requests', 'id'), s.last_value, s.is_called) from api_requests_unpartitioned_id_seq s;`);
    this.addSql(`drop table api_requests_unpartitioned;`);

    this.addSql(`alter table api_requests add constraint api_requests_pkey primary key (id, at);`);
    this.addSql(`alter table api_requests add constraint api_requests_organization_id_fkey foreign key (organization_id) references organizations (id);`);
    this.addSql(`create index api_requests_organization_idx on api_requests (organization_id, at desc, id desc);`);
    this.addSql(`create index api_requests_request_idx on api_requests (organization_id, request_id);`);
  }
}
