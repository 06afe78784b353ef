import nx from "@nx/eslint-plugin";
import tseslint from "typescript-eslint";

/**
 * Lint rules. The one that matters most is the module boundary: the folder layout is the
 * architecture, and tags enforce it.
 *   type:domain      → imports nothing of ours
 *   type:driver      → domain only (postgres: the PostgreSQL driver and bootstrap); only adapters
 *                      (persistence) import it, and others reach it through persistence's re-exports
 *   type:adapter     → domain and the driver (persistence, webhooks, ops)
 *   type:application → domain and adapters (the use cases)
 *   type:app         → wires domain, adapters and use cases, never another app: what two apps share
 *                      lives in a package (settings readers, rate limits and HTTP errors in ops, sign-in
 *                      links in application). Two exceptions: an app's tests may run the apps it talks
 *                      to, and `platter start` (apps/cli/src/commands/start.ts) runs the three servers.
 *   type:tool        → anything (benchmarks, scripts, test support); tests may import it too
 *   type:testing     → the test harness (@platter/testing: embedded PostgreSQL, a database per test
 *                      file, fixtures): domain, adapters and use cases; only tests, test setup files and
 *                      tools import it, never a package's or an app's production `src`
 */
/** A scope cast into being, which only authentication and the operator's step may do. */
const scopeCast = {
  selector: "TSAsExpression[typeAnnotation.typeName.name='OrgScope'], TSTypeAssertion[typeAnnotation.typeName.name='OrgScope']",
  message: "A scope is never cast into being: it comes from authentication or Operator.scopeOf.",
};

/** A store's insert called by an app, past the use case that writes the record's message with it. */
const recordInsert = {
  selector: "CallExpression[callee.property.name='insert']",
  message: "Apps create records through @platter/application (Clients.create, Events.create, BusinessActions), never a store's insert.",
};

/** What no app's source may write: a scope cast into being, the ORM and SQL reached directly, or a record inserted past its use case. */
const appSyntax = [
  scopeCast,
  recordInsert,
  {
    selector: "MemberExpression[property.name=/^(orm|em|getConnection|execute)$/]",
    message: "Apps use the storage services of @platter/persistence, never the ORM or SQL directly.",
  },
];

/** The domain's scope constructors, which only authentication and the operator's step may call. */
const scopeMakers = {
  name: "@platter/domain",
  importNames: ["authenticatedScope", "operatorScope", "developerSessionScope"],
  message: "Scopes come from ApiKeyRepository.authenticate (or authenticateHash), DeveloperSessions (sign-in and session authentication) or Operator.scopeOf only.",
};

/** The stores that make scopes (from a key, a sign-in link or session, an id). */
const SCOPE_MAKING_FILES = [
  "packages/persistence/src/repositories/api-key.repository.ts",
  "packages/persistence/src/operator/operator.ts",
  "packages/persistence/src/developer-area/developer-sessions.ts",
  // A live organization's scope to its sandbox's and back (`scopeOfLinkedOrganization`).
  "packages/persistence/src/sandbox/sandboxes.ts",
];

/**
 * The stores behind the application services: an organization's keys, endpoints, deliveries and
 * audit log are changed only through `@platter/application`, which runs each change's checks and
 * its audit row in one transaction.
 */
const applicationStores = {
  name: "@platter/persistence",
  importNames: ["ApiKeyRepository", "WebhookEndpointRepository", "DeliveryRepository", "AuditLog", "Sandboxes", "LocalListeners"],
  message: "Use @platter/application (ApiKeys, WebhookEndpoints, Deliveries, Sandbox, LocalForwarding): it audits each change in the change's transaction.",
};

/**
 * The stores under the API's creates and the business actions: a record is created only through its
 * use case in `@platter/application` (`Clients.create`, `Events.create`, `BusinessActions`), which
 * writes it, its webhook message and its Idempotency-Key in one transaction.
 */
const recordStores = [
  {
    name: "@platter/persistence",
    importNames: ["IdempotencyKeys", "WebhookMessages"],
    message: "Create records through @platter/application (Clients.create, Events.create, BusinessActions): it writes the record and its message in one transaction.",
  },
  {
    name: "@platter/persistence/operator",
    importNames: ["BusinessRecords"],
    message: "Business actions are @platter/application's BusinessActions: the transition, the change and its message in one transaction.",
  },
];


/** The API reaches no sandbox: a sandbox key works like any key, and nothing in a request triggers a business event. */
const noSandboxes = {
  name: "@platter/persistence",
  importNames: ["Sandboxes"],
  message: "The API neither opens nor resets sandboxes nor triggers their events: that is the Developer area's and the CLI's, through @platter/application.",
};

/**
 * The boundaries; `testing` names tags tests may import besides (the harness, `type:testing`, and test
 * support in tools), `allow` the packages a file may import whatever their tags.
 */
const boundaries = (testing = [], allow = []) => [
  "error",
  {
    enforceBuildableLibDependency: false,
    allow,
    // Through tests only: persistence's own tests use the harness and the bulk seeds (both built on
    // persistence's entry points) and the application's demo data (a sandbox's contents), and the
    // application's tests use the harness, whose sandbox fixture holds that demo data. The tags still
    // keep persistence's and the application's production code from importing what depends on them.
    ignoredCircularDependencies: [
      ["@platter/persistence", "@platter/testing"], ["@platter/persistence", "@platter/seeds"], ["@platter/persistence", "@platter/application"],
      ["@platter/application", "@platter/testing"],
    ],
    depConstraints: [
      { sourceTag: "type:domain", onlyDependOnLibsWithTags: ["type:domain", ...testing] },
      { sourceTag: "type:driver", onlyDependOnLibsWithTags: ["type:domain", ...testing] },
      { sourceTag: "type:adapter", onlyDependOnLibsWithTags: ["type:domain", "type:driver", ...testing] },
      { sourceTag: "type:application", onlyDependOnLibsWithTags: ["type:domain", "type:adapter", ...testing] },
      { sourceTag: "type:app", onlyDependOnLibsWithTags: ["type:domain", "type:adapter", "type:application", ...testing] },
      { sourceTag: "type:tool", onlyDependOnLibsWithTags: ["type:domain", "type:driver", "type:adapter", "type:application", "type:app", "type:tool", "type:testing"] },
      { sourceTag: "type:testing", onlyDependOnLibsWithTags: ["type:domain", "type:driver", "type:adapter", "type:application", ...testing] },
    ],
  },
];

/** What an app's end-to-end tests may import: the harness, test support, and the apps they run beside it. */
export const appTestBoundaries = boundaries(["type:testing", "type:tool", "type:app"]);

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/.nx/**", "**/.data/**"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts", "**/*.js"],
    plugins: { "@nx": nx },
    rules: {
      "@nx/enforce-module-boundaries": boundaries(),
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
  {
    // The domain (and the contract built from it) is pure: no I/O, no frameworks. Hashing from
    // node:crypto is computation, not I/O.
    files: ["packages/domain/src/**/*.ts", "packages/contract/src/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["node:*", "!node:crypto"], message: "The domain and the contract do no I/O." },
            { group: ["koa", "@koa/*", "@mikro-orm/*", "pg", "undici", "pino"], message: "The domain and the contract import no framework or driver." },
          ],
        },
      ],
    },
  },
  {
    // Tests (and test setup: vitest configs name the harness's global setup) may also use the harness
    // (@platter/testing) and the test support in tools (packing a package, for one).
    files: ["**/test/**/*.ts", "**/*.test.ts", "**/vitest.config.ts"],
    rules: { "@nx/enforce-module-boundaries": boundaries(["type:testing", "type:tool"]) },
  },
  {
    // Persistence's sandbox tests write a sandbox's contents, the application's demo data.
    files: ["packages/persistence/test/**/*.ts"],
    rules: { "@nx/enforce-module-boundaries": boundaries(["type:testing", "type:tool", "type:application"]) },
  },
  {
    // An app's end-to-end tests run the apps it talks to (the CLI's against the API and the
    // Developer area, the area's beside a dispatcher, the SDK's against the API).
    // (The SDK's own eslint.config.js says the same for its tests.)
    files: ["apps/*/test/**/*.ts"],
    rules: { "@nx/enforce-module-boundaries": appTestBoundaries },
  },
  {
    // `platter start` is the one process that runs the API, the dispatcher and the Developer area
    // together on one platform: it imports their start functions and configuration, nothing else.
    files: ["apps/cli/src/commands/start.ts"],
    rules: { "@nx/enforce-module-boundaries": boundaries([], ["@platter/api", "@platter/developer-area", "@platter/dispatcher"]) },
  },
  {
    // `platter seed bulk` is the operator's one use of the bulk seeds (a tool, `@platter/seeds`); the
    // demo data it and a sandbox write is the application's.
    files: ["apps/cli/src/commands/seed.ts"],
    rules: { "@nx/enforce-module-boundaries": boundaries([], ["@platter/seeds"]) },
  },
  {
    // The database's internals (`@platter/persistence/tooling`) are for the test harness
    // (@platter/testing) and the bulk seeds (@platter/seeds) alone: production code opens the
    // platform through persistence's other entry points, and tests through @platter/testing.
    files: ["**/*.ts", "**/*.js"],
    ignores: ["packages/testing/**", "packages/seeds/**"],
    rules: {
      "@typescript-eslint/no-restricted-imports": ["error", {
        paths: [{ name: "@platter/persistence/tooling", message: "The database's internals are the test harness's and the bulk seeds'; use persistence's other entry points (tests: @platter/testing)." }],
      }],
    },
  },
  {
    // Isolation by construction: a scope (the key to an organization's data) is made only by
    // authentication (API keys, Developer-area sessions) and by the operator's explicit
    // `Operator.scopeOf`, never cast into being.
    files: ["**/*.ts"],
    ignores: ["packages/domain/**", ...SCOPE_MAKING_FILES, "**/test/**", "**/*.test.ts", "**/testing/**"],
    rules: {
      "no-restricted-imports": ["error", { paths: [scopeMakers] }],
      "no-restricted-syntax": ["error", scopeCast],
    },
  },
  {
    // Raw statements on the pool (`Database.rows`) only where no scope exists yet or none applies:
    // the scope makers, the system stores, and OrgSql itself. Everything else goes through OrgSql.
    files: ["packages/persistence/src/**/*.ts"],
    ignores: [
      ...SCOPE_MAKING_FILES, "packages/persistence/src/org-sql.ts", "packages/persistence/src/webhooks/delivery-queue.ts",
      // The delivery queue's jobs that run on the pool it hands them (`rows`).
      "packages/persistence/src/webhooks/operator-notices.ts", "packages/persistence/src/webhooks/queue-metrics.ts",
      "packages/persistence/src/webhooks/alert-mails.ts",
      // An alert address's confirmation: found by its link's token hash alone (whoever opens the link has no session).
      "packages/persistence/src/alerts/alert-recipients.ts",
      "packages/persistence/src/process-instances.ts", "packages/persistence/src/housekeeping.ts", "packages/persistence/src/request-log.ts",
      // Across organizations by time only: partitions made, settled and dropped whole.
      "packages/persistence/src/history-partitions.ts",
    ],
    rules: {
      "no-restricted-syntax": [
        "error",
        scopeCast,
        {
          selector: "MemberExpression[property.name='rows'][object.name=/^(database|db)$/], VariableDeclarator[init.argument.name='Database'] > ObjectPattern > Property[key.name='rows']",
          message: "Organization data goes through OrgSql; raw Database.rows is for the files eslint.config.js lists.",
        },
      ],
    },
  },
  {
    // Bulk seeding writes set-based statements of its own (a million rows made by PostgreSQL), each
    // binding the scope's organization to every row it makes: only these two files run raw statements.
    files: ["packages/seeds/src/**/*.ts"],
    ignores: ["packages/seeds/src/bulk.ts", "packages/seeds/src/delivery-log.ts"],
    rules: {
      "no-restricted-syntax": ["error", scopeCast, {
        selector: "MemberExpression[property.name=/^(getConnection|execute|getNativeClient|rows|query)$/]",
        message: "Raw statements of the seeds live in bulk.ts and delivery-log.ts (eslint.config.js), each binding the scope's organization.",
      }],
    },
  },
  ...[
    // The processes that serve organizations reach their data only through authentication's scopes:
    // never the operator's storage (scopes from ids, seeding) or the dispatcher's (every
    // organization's queue and secrets). Sign-in links, made for the operator and internal teams,
    // are an application use case (`makeSignInLink`); the Developer area's changes to keys, endpoints
    // and deliveries go through the application services. The API authenticates with the key store.
    // The API's actor is the key that authenticated the request (`apiKeyActor`, for its creates).
    { files: ["apps/api/src/**/*.ts"], stores: [noSandboxes, ...recordStores], actors: ["operatorActor"] },
    { files: ["apps/developer-area/src/**/*.ts"], stores: [applicationStores, ...recordStores], actors: ["operatorActor", "apiKeyActor"] },
  ].map(({ stores, actors, ...files }) => ({
    ...files,
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            // Nor may they act as the operator: their changes are their session's (or their key's).
            {
              ...scopeMakers,
              importNames: [...scopeMakers.importNames, ...actors],
              message: `${scopeMakers.message} Changes here are made as the session (or the key LocalForwarding.authenticate found), never as the operator (operatorActor).`,
            },
            ...stores,
            { name: "@platter/persistence/operator", message: "The operator's storage is for the CLI: requests reach data through their scope." },
            { name: "@platter/persistence/dispatcher", message: "The delivery queue is the dispatcher's alone." },
          ],
        },
      ],
    },
  })),
  {
    // The operator's changes to keys, endpoints and deliveries are audited like a session's.
    files: ["apps/cli/src/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { paths: [scopeMakers, applicationStores, ...recordStores] }] },
  },
  {
    // Apps reach storage through its services only: no raw ORM, no SQL of their own.
    files: ["apps/*/src/**/*.ts"],
    rules: { "no-restricted-syntax": ["error", ...appSyntax] },
  },
  {
    // A Developer-area POST is added only by session.ts's `formRoutes` (or `signInRoute`), which
    // check its origin and form token before it runs; or by listen-routes.ts, the CLI's routes,
    // which take an API key in the Authorization header and no cookie (nothing a browser sends by itself).
    files: ["apps/developer-area/src/**/*.ts"],
    ignores: ["apps/developer-area/src/session.ts", "apps/developer-area/src/listen-routes.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        ...appSyntax,
        {
          selector: "CallExpression[callee.property.name='post'][callee.object.name='router']",
          message: "Add a POST with formRoutes (session.ts): it checks the form's origin and token first.",
        },
      ],
    },
  },
);
