import { Migration } from "@mikro-orm/migrations";

/**
 * Indexes pending operator notices by organization, then due time: the operator channel's claim
 * walks organizations on it (one descent each) and reads only each walked organization's oldest due
 * notices, so one organization's burst of notices cannot hold back another's operational webhook.
 */
export class Migration20261204060000OperatorNoticesByOrganization extends Migration {
  override up(): void {
    this.addSql(`
      create index endpoint_notices_operator_due_idx on endpoint_notices (organization_id, operator_next_attempt_at, id)
        where operator_status = 'pending';
    `);
  }
}
