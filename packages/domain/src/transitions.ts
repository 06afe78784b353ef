import { Result } from "effect";
import { InvalidTransition } from "./errors.ts";
import type { InvoiceStatus } from "./resources/invoice.ts";
import type { ProposalStatus } from "./resources/proposal.ts";

/** Transitions: which state changes the business allows. An impossible one is an error, never a no-op. */

const move = <S extends string>(allowed: Readonly<Partial<Record<S, readonly S[]>>>, what: "an invoice" | "a proposal") =>
  (from: S, to: S): Result.Result<S, InvalidTransition> =>
    allowed[from]?.includes(to)
      ? Result.succeed(to)
      : Result.fail(new InvalidTransition({ message: `cannot move ${what} from ${from} to ${to}` }));

/** draft → sent → paid; a draft may be paid directly (cash on the day); void and paid are final. */
export const invoiceTransition = move<InvoiceStatus>({ draft: ["sent", "paid", "void"], sent: ["paid", "void"] }, "an invoice");

/** A proposal is approved once, from draft or sent; declined and approved are final. */
export const proposalTransition = move<ProposalStatus>(
  { draft: ["sent", "approved", "declined"], sent: ["approved", "declined"] },
  "a proposal",
);
