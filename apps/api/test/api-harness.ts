import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { repositoriesLayer } from "@platter/persistence";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/persistence/testing";
import { ManagedRuntime } from "effect";
import { pino } from "pino";
import { inject } from "vitest";
import { createApiApp } from "../src/app.ts";

/** An API served over real HTTP on 127.0.0.1, on a fresh database of its own. */
export interface ApiUnderTest {
  readonly db: TestDatabase;
  readonly baseUrl: string;
  /** Sends a request; `key` becomes the bearer header. */
  readonly call: (method: string, path: string, options?: { key?: string; body?: unknown; headers?: Record<string, string> }) => Promise<ApiResponse>;
  readonly newOrganization: (name?: string, currency?: string) => Promise<OrganizationFixture>;
  readonly close: () => Promise<void>;
}

export interface ApiResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

export const startApiUnderTest = async (): Promise<ApiUnderTest> => {
  const db = await createTestDatabase(inject("pgAdminUrl"));
  const runtime = ManagedRuntime.make(repositoriesLayer(db.orm));
  const server: Server = createServer(createApiApp(runtime, pino({ level: "silent" })).callback());
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    db,
    baseUrl,
    call: async (method, path, options = {}) => {
      const headers: Record<string, string> = { ...options.headers };
      if (options.key) headers["authorization"] = `Bearer ${options.key}`;
      let body: string | undefined;
      if (options.body !== undefined) {
        body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
        headers["content-type"] ??= "application/json";
      }
      const response = await fetch(baseUrl + path, { method, headers, body });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text === "" ? undefined : JSON.parse(text) };
    },
    newOrganization: (name, currency) => createOrganization(db.orm, name, currency),
    close: async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
      await runtime.dispose();
      await db.dispose();
    },
  };
};
