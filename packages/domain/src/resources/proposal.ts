import { Schema } from "effect";

/** Proposal: a priced offer for an event that the client approves or declines. */
export const PROPOSAL_STATUSES = ["draft", "sent", "approved", "declined"] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];

/** A proposal as webhooks show it: `name` is its title, `total` in major units of `currency`. */
export const Proposal = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  status: Schema.Literals(PROPOSAL_STATUSES),
  event_id: Schema.Int,
  total: Schema.Finite,
  currency: Schema.String,
  created_at: Schema.String,
  approved_at: Schema.NullOr(Schema.String),
});
export type Proposal = typeof Proposal.Type;
