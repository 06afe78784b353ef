/** Proposal: a priced offer for an event that the client approves or declines. */
export const PROPOSAL_STATUSES = ["draft", "sent", "approved", "declined"] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];
