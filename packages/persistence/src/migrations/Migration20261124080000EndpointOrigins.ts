import { Migration } from "@mikro-orm/migrations";

/**
 * Endpoints carry their origin (`endpointOrigin(url)`, written by the application from then on):
 * dispatchers count attempts in flight per origin, as their HTTP client pools connections, and
 * claim no more of an origin's deliveries than they can send at once.
 *
 * Endpoints made before are given it here from the URL: scheme and host:port in lower case, the
 * default port dropped. (No question mark in the pattern, `\x3f` instead: statements' `?` are placeholders.)
 */
export class Migration20261124080000EndpointOrigins extends Migration {
  override up(): void {
    this.addSql(`
      alter table webhook_endpoints add column origin text;
      update webhook_endpoints set origin = regexp_replace(regexp_replace(
        lower(regexp_replace(url, '^([A-Za-z][A-Za-z0-9+.-]*://)([^/\\x3f#@]*@){0,1}([^/\\x3f#]*).*$', '\\1\\3')),
        '^(http://.*):80$', '\\1'), '^(https://.*):443$', '\\1');
      alter table webhook_endpoints alter column origin set not null;
    `);
  }
}
