import { Platter } from "@platter/sdk";

const platter = new Platter({ apiKey: process.env.PLATTER_API_KEY!, baseUrl: process.env.PLATTER_BASE_URL! });

// Every record, page after page: the SDK follows next_cursor for you.
let clientCount = 0;
for await (const client of platter.clients.list()) {
  if (client.email === null) clientCount++;
}
console.log(`${clientCount} clients without an email`);

// Page by page, with your page size (1–500; the default is 100).
for await (const page of platter.clients.list({ limit: 500 }).pages()) {
  console.log(`page of ${page.data.length}, more: ${page.has_more}`);
}

// Only the first few: fetching stops as soon as there are enough.
const newest = await platter.events.list({ limit: 20 }).toArray({ max: 20 });
console.log(`newest event: ${newest[0]?.name ?? "none"}`);

// Resume later: keep a page's next_cursor and start from it.
const firstPage = await platter.clients.list({ limit: 100 }).pages().next();
const cursor = firstPage.done ? null : firstPage.value.next_cursor;
if (cursor !== null) {
  const rest = await platter.clients.list({ cursor }).toArray();
  console.log(`after the first 100: ${rest.length} more`);
}
