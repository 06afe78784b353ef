import { Platter } from "@platter/sdk";

const platter = new Platter({ apiKey: process.env.PLATTER_API_KEY!, baseUrl: process.env.PLATTER_BASE_URL! });

// The event, then each distinct recipe of its dishes once (at most 4 at a time, retried as every GET).
const manifest = await platter.events.manifest(Number(process.env.EVENT_ID));
console.log(`${manifest.event.name}, ${manifest.event.event_date ?? "no date"}`);
for (const dish of manifest.dishes) {
  console.log(`${dish.course}: ${dish.servings} × ${dish.recipe_name} (${dish.allergens.join(", ") || "no allergens"})`);
}
const everyDish = Object.entries(manifest.diet_flags).filter(([, holds]) => holds).map(([flag]) => flag);
console.log(`allergens: ${manifest.allergens.join(", ") || "none"}; every dish: ${everyDish.join(", ") || "no diet flag"}`);
