/** What the global setup provides to every test file: the admin URL of this run's PostgreSQL. */
declare module "vitest" {
  export interface ProvidedContext {
    pgAdminUrl: string;
  }
}
export {};
