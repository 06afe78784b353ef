/**
 * The operator's storage (`@platter/persistence/operator`): a scope from an organization id or a
 * record's id (`Operator`), the statements behind the business actions (`BusinessRecords`; the actions are
 * the application's), and a transaction in a scope it holds (`scopedTransaction`, which writes the demo data). For the CLI
 * and the operator's own tools; lint forbids it in the API and the Developer area, whose scopes
 * come only from authentication.
 */
export * from "./operator/business-records.ts";
export * from "./operator/operator.ts";
export * from "./operator/stored-secrets-resealing.ts";
export type { SealedCounts } from "./stored-secrets.ts";
export { scopedTransaction } from "./org-sql.ts";
