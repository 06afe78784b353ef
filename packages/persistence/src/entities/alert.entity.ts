import { defineEntity, p } from "@mikro-orm/postgresql";
import { identityId } from "./columns.ts";
import { OrganizationEntity } from "./organization.entity.ts";
import { EndpointNoticeEntity } from "./webhook.entity.ts";

/**
 * E-mail alerts to an organization's developers: the addresses it alerts (each confirmed by a link
 * mailed to it; only the token's SHA-256 hash is kept, until it is used) and the mail outbox, one row
 * per endpoint notice and confirmed address, sent under the one lease (webhooks/lease.ts).
 */

/** An address an organization alerts; mailed only once `confirmedAt` is set. */
export const AlertRecipientEntity = defineEntity({
  name: "AlertRecipient",
  tableName: "alert_recipients",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    email: p.text(),
    /** The confirmation link's token hash; null once confirmed. */
    confirmationHash: p.text().nullable().unique(),
    confirmationExpiresAt: p.datetime(3).nullable(),
    confirmedAt: p.datetime(3).nullable(),
    createdAt: p.datetime(3).defaultRaw("now()"),
  },
  uniques: [{ name: "alert_recipients_organization_id_email_key", properties: ["organization", "email"] }],
});

/** One alert e-mail: a notice to one confirmed address, `sending` committed before the SMTP call. */
export const AlertMailEntity = defineEntity({
  name: "AlertMail",
  tableName: "alert_mails",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    notice: p.manyToOne(EndpointNoticeEntity).deleteRule("cascade"),
    recipient: p.manyToOne(AlertRecipientEntity).deleteRule("cascade"),
    email: p.text(),
    /** `pending`, `sending` (committed before the SMTP call), `sent`, `failed`, or `abandoned` (its sender died mid-send: never sent again). */
    status: p.text().default("pending"),
    attempts: p.integer().default(0),
    nextAttemptAt: p.datetime(3).defaultRaw("now()"),
    leaseToken: p.uuid().nullable(),
    leaseExpiresAt: p.datetime(3).nullable(),
    error: p.text().nullable(),
    completedAt: p.datetime(3).nullable(),
  },
  uniques: [{ name: "alert_mails_notice_id_recipient_id_key", properties: ["notice", "recipient"] }],
  indexes: [
    { name: "alert_mails_due_idx", properties: ["nextAttemptAt", "id"], where: { status: "pending" } },
    { name: "alert_mails_sending_idx", properties: ["id"], where: { status: "sending" } },
    { name: "alert_mails_recipient_idx", properties: ["recipient"] },
    { name: "alert_mails_organization_idx", properties: ["organization", "id"] },
  ],
  checks: [{ name: "alert_mails_status_check", expression: "status in ('pending', 'sending', 'sent', 'failed', 'abandoned')" }],
});
