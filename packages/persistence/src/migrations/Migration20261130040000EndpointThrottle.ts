import { Migration } from "@mikro-orm/migrations";

/**
 * A throttle per endpoint, set by its organization: at most `throttle_per_second` deliveries a
 * second (null: none), enforced by the dispatchers' claim through a token bucket kept on the
 * endpoint's row (`throttle_next_at`, the bucket's theoretical arrival time: the claim advances it
 * by one interval per delivery it leases).
 */
export class Migration20261130040000EndpointThrottle extends Migration {
  override up(): void {
    this.addSql(`
      alter table webhook_endpoints
        add column throttle_per_second int null,
        add column throttle_next_at timestamptz(3) null,
        add constraint webhook_endpoints_throttle_per_second_check check (throttle_per_second >= 1 and throttle_per_second <= 1000);
    `);
  }
}
