import root, { appTestBoundaries } from "../../eslint.config.js";

/**
 * The workspace rules, plus the SDK's own promise to integrators: its source imports nothing but
 * itself, so it ships without runtime dependencies and runs wherever `fetch` exists. (Node's
 * crypto is reached only through the dynamic `import("node:crypto")` fallback in web-crypto.ts.)
 */
export default [
  ...root,
  {
    files: ["src/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(?!\\.{1,2}/)",
              message: "The SDK has no runtime dependencies: import only the SDK's own files (no effect, no @platter/*, no node:*).",
            },
          ],
        },
      ],
    },
  },
  {
    // Its tests run the API (as every app's end-to-end tests may run the apps they talk to).
    files: ["test/**/*.ts"],
    rules: { "@nx/enforce-module-boundaries": appTestBoundaries },
  },
  {
    // The examples are written as an integrator writes them: importing the package by its name.
    files: ["examples/**/*.ts"],
    rules: { "@nx/enforce-module-boundaries": "off" },
  },
];
