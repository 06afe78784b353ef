import { Migration } from "@mikro-orm/migrations";

/**
 * The audit log is the organization's, not the Developer area's: a change made by the operator
 * (`platter key create`, `platter webhook add`, …) is recorded beside those of Developer-area
 * sessions. A row names exactly one actor: a session and the link that let it in, or the operator.
 */
export class Migration20261125000000AuditLog extends Migration {
  override up(): void {
    this.addSql(`
      alter table developer_audit_log rename to audit_log;
      -- Every constraint keeps its name's table part in step (PostgreSQL 18 also names NOT NULL ones).
      do $$
      declare c record;
      begin
        for c in select conname from pg_constraint where conrelid = 'audit_log'::regclass and conname like 'developer\\_audit\\_log\\_%' loop
          execute format('alter table audit_log rename constraint %I to %I', c.conname, substr(c.conname, length('developer_') + 1));
        end loop;
      end $$;
      alter index developer_audit_log_organization_idx rename to audit_log_organization_idx;
      alter sequence developer_audit_log_id_seq rename to audit_log_id_seq;
      alter table audit_log
        alter column session_id drop not null,
        alter column link_id drop not null,
        add column operator text,
        add constraint audit_log_actor_check check (
          (session_id is not null and link_id is not null and operator is null)
          or (session_id is null and link_id is null and operator is not null)
        );
    `);
  }
}
