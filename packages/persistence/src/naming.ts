import { UnderscoreNamingStrategy } from "@mikro-orm/core";

/**
 * Constraint names as PostgreSQL gives them (`<table>_pkey`, `<table>_<columns>_fkey`,
 * `<table>_<columns>_key`), so the entities describe the schema the SQL migrations create.
 */
export class PostgresNamingStrategy extends UnderscoreNamingStrategy {
  override indexName(
    tableName: string,
    columns: string[],
    type: "primary" | "foreign" | "unique" | "index" | "sequence" | "check" | "default" | "trigger",
  ): string {
    if (type === "primary") return `${tableName}_pkey`;
    if (type === "foreign") return `${tableName}_${columns.join("_")}_fkey`;
    if (type === "unique") return `${tableName}_${columns.join("_")}_key`;
    return super.indexName(tableName, columns, type);
  }
}
