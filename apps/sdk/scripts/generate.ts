import { mkdir, writeFile } from "node:fs/promises";
import { dirname, relative } from "node:path";
import { API_TYPES_PATH, OPENAPI_JSON_PATH, renderApiTypes, renderOpenApiJson } from "./api-artifacts.ts";

/**
 * Regenerates docs/openapi.json and apps/sdk/src/generated/api-types.ts. Run after changing a
 * resource Schema or an endpoint: `npm run generate -w @platter/sdk`
 * (i.e. `node --conditions=@platter/source apps/sdk/scripts/generate.ts`).
 */

const write = async (path: string, text: string): Promise<void> => {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
  console.log(`wrote ${relative(process.cwd(), path)}`);
};

const openApiJson = renderOpenApiJson();
await write(OPENAPI_JSON_PATH, openApiJson);
await write(API_TYPES_PATH, await renderApiTypes(openApiJson));
