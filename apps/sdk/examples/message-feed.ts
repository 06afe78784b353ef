import { Platter } from "@platter/sdk";

const platter = new Platter({
  apiKey: process.env.PLATTER_API_KEY!,
  baseUrl: process.env.PLATTER_BASE_URL!,
  developerAreaUrl: process.env.PLATTER_DEVELOPER_AREA_URL!,
});

// Where the last run stopped (nothing the first time: from the oldest message kept).
let after = process.env.PLATTER_FEED_CURSOR || undefined;
for await (const m of platter.messages.list({ after, types: ["client.created"] })) {
  // m.envelope is what a delivery carries (m.body, its exact bytes): deduplicate on m.id.
  console.log(`${m.created_at}  ${m.type}  ${m.id}  ${m.envelope?.type === "client.created" ? m.envelope.data.name : ""}`);
  after = m.cursor;
}
console.log(`resume after: ${after ?? "nothing yet"}`);
