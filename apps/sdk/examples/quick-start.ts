import { Platter } from "@platter/sdk";

const platter = new Platter({
  apiKey: process.env.PLATTER_API_KEY!, // platter_rw_… (or platter_ro_… for reading only)
  baseUrl: process.env.PLATTER_BASE_URL ?? "http://localhost:3000/v1",
});

const me = await platter.me.retrieve();
console.log(`Connected to ${me.name} (${me.currency})`);

const { id } = await platter.events.create({ name: "Spring gala", event_date: "2027-04-17", guests: 120 });
const event = await platter.events.retrieve(id);
console.log(`Created event ${event.id}: ${event.name}, ${event.status}`);

for await (const listed of platter.events.list()) {
  console.log(`${listed.event_date ?? "no date"}  ${listed.name}`);
}
