import { TooManyPageLoads } from "@platter/domain";

/**
 * Signed-in requests in flight per organization (`DEVELOPER_AREA_PAGE_LOADS_PER_ORGANIZATION`):
 * each may hold one of the area's pool connections for up to the statement timeout, so without a
 * bound one organization's sessions, loading ten heavy pages at once, would hold the whole pool
 * and every other organization would wait. One more than the bound is answered at once with a
 * 429 page and `Retry-After: 1` (no queue: a queue would hold the connection's socket instead).
 */
export class PageLoads {
  private readonly perOrganization: number;
  /** Requests in flight per organization with any; an organization's entry goes when its last ends. */
  private readonly inFlight = new Map<number, number>();

  constructor(perOrganization: number) {
    this.perOrganization = perOrganization;
  }

  /** Runs `load` as one of organization `organizationId`'s requests in flight; `TooManyPageLoads` when it has the bound already. */
  async hold(organizationId: number, load: () => Promise<unknown>): Promise<void> {
    const running = this.inFlight.get(organizationId) ?? 0;
    if (running >= this.perOrganization) throw new TooManyPageLoads({ allowed: this.perOrganization });
    this.inFlight.set(organizationId, running + 1);
    try {
      await load();
    } finally {
      const left = (this.inFlight.get(organizationId) ?? 1) - 1;
      if (left === 0) this.inFlight.delete(organizationId);
      else this.inFlight.set(organizationId, left);
    }
  }
}
