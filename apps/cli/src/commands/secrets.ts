import { StoredSecretsResealing } from "@platter/persistence/operator";
import { defineCommand } from "citty";
import { jsonFlag } from "../arguments.ts";
import { loadCliConfig } from "../config.ts";
import { withPlatform } from "../database-session.ts";
import { report } from "../output.ts";

/** `platter secrets reencrypt`: every stored secret sealed anew with the first key of `SECRET_ENCRYPTION_KEYS`. */
const reencryptCommand = defineCommand({
  meta: {
    name: "reencrypt",
    description: "Seal every stored signing and form secret with the first key of SECRET_ENCRYPTION_KEYS (after a new key was put first; then the old one may go)",
  },
  args: { json: jsonFlag },
  run: async ({ args }) => {
    const counts = await withPlatform(loadCliConfig(), (platform) => platform.runPromise(StoredSecretsResealing.use((s) => s.reseal())));
    report(
      args.json,
      { key_id: counts.keyId, endpoint_secrets: counts.endpointSecrets, session_form_secrets: counts.sessionFormSecrets },
      `re-sealed ${counts.endpointSecrets} endpoint secret(s) and ${counts.sessionFormSecrets} session form secret(s) with key "${counts.keyId}"; ` +
        "every stored secret is now sealed with it",
    );
  },
});

/** `platter secrets`: the stored secrets' keys. */
export const secretsCommand = defineCommand({
  meta: { name: "secrets", description: "Stored secrets: re-seal them with the current key" },
  subCommands: { reencrypt: reencryptCommand },
});
