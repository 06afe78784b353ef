import { defineEntity, p } from "@mikro-orm/postgresql";

/**
 * Each key id `SECRET_ENCRYPTION_KEYS` has given, with its check value: a known text sealed with
 * that key when the id was first used, so a start with another key under the id is refused
 * (stored-secrets.ts). System data: no organization's.
 */
export const SecretKeyCheckEntity = defineEntity({
  name: "SecretKeyCheck",
  tableName: "secret_key_checks",
  properties: {
    keyId: p.text().primary(),
    checkValue: p.text(),
    createdAt: p.datetime(3).defaultRaw("now()"),
  },
});
