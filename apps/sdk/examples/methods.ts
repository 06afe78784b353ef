import { Platter } from "@platter/sdk";

const platter = new Platter({ apiKey: process.env.PLATTER_API_KEY!, baseUrl: process.env.PLATTER_BASE_URL! });

// The organization the key belongs to.
const me = await platter.me.retrieve(); // { id, name, currency, created_at }

// Events: newest first; the detail carries its dishes. Creating needs a read/write key.
const { id: eventId } = await platter.events.create({
  name: "Hochzeit Müller",
  event_date: "2027-06-19",
  guests: 80,
  price_per_head: 42.5, // in the organization's currency
  event_type: "wedding",
});
const event = await platter.events.retrieve(eventId); // { …, status: "inquiry", dishes: [] }
const newestEvents = await platter.events.list().toArray({ max: 10 });

// Recipes: by name, with allergens and diet flags; the detail carries its ingredients.
const recipes = await platter.recipes.list().toArray();
const recipe = recipes[0] === undefined ? undefined : await platter.recipes.retrieve(recipes[0].id);

// Clients: by name. Only `name` is required.
const { id: clientId } = await platter.clients.create({ name: "Ada Lovelace", email: "ada@example.com" });
const clients = await platter.clients.list().toArray();

// Invoices: newest first, with totals; the detail carries its line items.
const invoices = await platter.invoices.list().toArray();
const invoice = invoices[0] === undefined ? undefined : await platter.invoices.retrieve(invoices[0].id);

console.log(`organization: ${me.name}`);
console.log(`event ${event.id}: ${event.name} (${event.status}), ${newestEvents.length} listed`);
console.log(`recipes: ${recipes.length}, first: ${recipe?.name ?? "none"} with ${recipe?.ingredients.length ?? 0} ingredients`);
console.log(`client ${clientId} created, ${clients.length} clients`);
console.log(`invoices: ${invoices.length}, newest: ${invoice?.number ?? "none"} total ${invoice?.total ?? 0} ${invoice?.currency ?? ""}`);
