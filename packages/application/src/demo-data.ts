import type { EntityName, RequiredEntityData } from "@mikro-orm/postgresql";
import {
  type Allergen, COURSES, currencyExponent, type EventStatus, type EventType, invoiceTotals, type InvoiceStatus,
  type OrgScope, type ProposalStatus, UNITS,
} from "@platter/domain";
import { Effect } from "effect";
import {
  ClientEntity, DishEntity, EventEntity, IngredientEntity, InvoiceEntity, InvoiceLineItemEntity, type OrgSql, ProposalEntity,
  RecipeEntity,
} from "@platter/persistence";
import { scopedTransaction } from "@platter/persistence/operator";

/**
 * Demo data: a small, realistic catering business (recipes, clients, events with menus,
 * proposals, invoices) for trying the API by hand and for `npm start` on an empty database.
 * It is fixed data, dated relative to today, so every run looks the same and stays current.
 * Recipe allergens and diet flags are derived from the ingredients, so they are always consistent.
 * No webhook messages are recorded: seeding is not business activity and must not fire webhooks.
 */

/** How many rows of each kind the demo data wrote. */
export interface DemoCounts {
  readonly recipes: number;
  readonly clients: number;
  readonly events: number;
  readonly invoices: number;
}

type Unit = (typeof UNITS)[number];
type Course = (typeof COURSES)[number];

/** What an ingredient brings to a recipe: its allergens, and what makes it unsuitable for some diets. */
interface PantryItem {
  readonly allergens?: readonly Allergen[];
  /** `animal`: meat, fish or seafood (not vegetarian); `animal_product`: dairy, eggs, honey (vegetarian, not vegan). */
  readonly origin?: "animal" | "animal_product";
}

const PANTRY = {
  "salmon fillet": { allergens: ["fish"], origin: "animal" },
  "smoked salmon": { allergens: ["fish"], origin: "animal" },
  "king prawns": { allergens: ["crustaceans"], origin: "animal" },
  "mussels": { allergens: ["molluscs"], origin: "animal" },
  "beef fillet": { origin: "animal" },
  "lamb shoulder": { origin: "animal" },
  "chicken thighs": { origin: "animal" },
  "prosciutto": { origin: "animal" },
  "butter": { allergens: ["milk"], origin: "animal_product" },
  "double cream": { allergens: ["milk"], origin: "animal_product" },
  "crème fraîche": { allergens: ["milk"], origin: "animal_product" },
  "burrata": { allergens: ["milk"], origin: "animal_product" },
  "goat's cheese": { allergens: ["milk"], origin: "animal_product" },
  "mascarpone": { allergens: ["milk"], origin: "animal_product" },
  "vegetarian hard cheese": { allergens: ["milk"], origin: "animal_product" },
  "eggs": { allergens: ["eggs"], origin: "animal_product" },
  "mayonnaise": { allergens: ["eggs", "mustard"], origin: "animal_product" },
  "honey": { origin: "animal_product" },
  "plain flour": { allergens: ["gluten"] },
  "buckwheat flour": {},
  "puff pastry": { allergens: ["gluten", "milk"], origin: "animal_product" },
  "shortcrust pastry": { allergens: ["gluten", "milk"], origin: "animal_product" },
  "sourdough bread": { allergens: ["gluten"] },
  "ladyfingers": { allergens: ["gluten", "eggs"], origin: "animal_product" },
  "bulgur wheat": { allergens: ["gluten"] },
  "lupin flour flatbread": { allergens: ["lupin", "gluten"] },
  "soy sauce": { allergens: ["soybeans", "gluten"] },
  "tamari": { allergens: ["soybeans"] },
  "firm tofu": { allergens: ["soybeans"] },
  "sesame oil": { allergens: ["sesame"] },
  "sesame seeds": { allergens: ["sesame"] },
  "tahini": { allergens: ["sesame"] },
  "dijon mustard": { allergens: ["mustard"] },
  "vegetable stock": { allergens: ["celery"] },
  "celery": { allergens: ["celery"] },
  "ground almonds": { allergens: ["tree_nuts"] },
  "walnuts": { allergens: ["tree_nuts"] },
  "peanut butter": { allergens: ["peanuts"] },
  "dry white wine": { allergens: ["sulphites"] },
  "red wine": { allergens: ["sulphites"] },
  "marsala": { allergens: ["sulphites"] },
  "white wine vinegar": { allergens: ["sulphites"] },
  "dark chocolate (70%)": {},
  "cocoa powder": {},
  "coconut milk": {},
  "agar flakes": {},
  "arborio rice": {},
  "rice paper wrappers": {},
  "chickpeas": {},
  "baby spinach": {},
  "butternut squash": {},
  "heritage tomatoes": {},
  "cherry tomatoes": {},
  "chopped tomatoes": {},
  "mixed mushrooms": {},
  "shallots": {},
  "garlic": {},
  "fresh ginger": {},
  "lemons": {},
  "limes": {},
  "basil": {},
  "flat-leaf parsley": {},
  "mint": {},
  "rosemary": {},
  "thyme": {},
  "chives": {},
  "coriander": {},
  "beetroot": {},
  "carrots": {},
  "parsnips": {},
  "red onions": {},
  "white cabbage": {},
  "cucumber": {},
  "asparagus": {},
  "pak choi": {},
  "little gem lettuce": {},
  "mixed salad leaves": {},
  "waxy potatoes": {},
  "raspberries": {},
  "strawberries": {},
  "vanilla pod": {},
  "caster sugar": {},
  "espresso": {},
  "elderflower cordial": {},
  "sparkling water": {},
  "curry paste": {},
  "olive oil": {},
  "sea salt": {},
  "black pepper": {},
} as const satisfies Record<string, PantryItem>;

type PantryName = keyof typeof PANTRY;

interface RecipeSpec {
  readonly name: string;
  readonly servings: number;
  readonly ingredients: ReadonlyArray<readonly [PantryName, number, Unit]>;
}

const RECIPES: readonly RecipeSpec[] = [
  { name: "Smoked salmon blini", servings: 24, ingredients: [
    ["buckwheat flour", 120, "g"], ["plain flour", 60, "g"], ["eggs", 2, "piece"], ["crème fraîche", 200, "ml"],
    ["smoked salmon", 300, "g"], ["chives", 1, "bunch"], ["lemons", 1, "piece"],
  ] },
  { name: "Beetroot & goat's cheese crostini", servings: 24, ingredients: [
    ["sourdough bread", 1, "piece"], ["beetroot", 400, "g"], ["goat's cheese", 200, "g"], ["honey", 2, "tbsp"],
    ["walnuts", 60, "g"], ["thyme", 1, "bunch"],
  ] },
  { name: "Vegetable spring rolls", servings: 20, ingredients: [
    ["rice paper wrappers", 20, "piece"], ["carrots", 300, "g"], ["white cabbage", 250, "g"], ["mint", 1, "bunch"],
    ["tamari", 4, "tbsp"], ["sesame oil", 2, "tbsp"], ["limes", 2, "piece"],
  ] },
  { name: "Peanut satay chicken skewers", servings: 20, ingredients: [
    ["chicken thighs", 1.2, "kg"], ["peanut butter", 150, "g"], ["soy sauce", 3, "tbsp"], ["coconut milk", 200, "ml"],
    ["limes", 2, "piece"], ["fresh ginger", 30, "g"],
  ] },
  { name: "Classic prawn cocktail", servings: 10, ingredients: [
    ["king prawns", 800, "g"], ["mayonnaise", 250, "ml"], ["little gem lettuce", 3, "piece"], ["lemons", 2, "piece"],
    ["cucumber", 1, "piece"], ["black pepper", 1, "pinch"],
  ] },
  { name: "Heritage tomato & burrata salad", servings: 10, ingredients: [
    ["heritage tomatoes", 1.5, "kg"], ["burrata", 4, "piece"], ["basil", 1, "bunch"], ["olive oil", 100, "ml"],
    ["sea salt", 1, "tsp"],
  ] },
  { name: "Roasted butternut squash soup", servings: 12, ingredients: [
    ["butternut squash", 2.5, "kg"], ["red onions", 2, "piece"], ["garlic", 4, "piece"], ["fresh ginger", 40, "g"],
    ["vegetable stock", 2, "l"], ["coconut milk", 400, "ml"], ["olive oil", 3, "tbsp"],
  ] },
  { name: "Moules marinières", servings: 8, ingredients: [
    ["mussels", 2, "kg"], ["shallots", 4, "piece"], ["garlic", 3, "piece"], ["dry white wine", 300, "ml"],
    ["double cream", 150, "ml"], ["butter", 50, "g"], ["flat-leaf parsley", 1, "bunch"],
  ] },
  { name: "Beef Wellington", servings: 10, ingredients: [
    ["beef fillet", 2, "kg"], ["puff pastry", 750, "g"], ["mixed mushrooms", 600, "g"], ["prosciutto", 200, "g"],
    ["dijon mustard", 3, "tbsp"], ["eggs", 2, "piece"], ["thyme", 1, "bunch"],
  ] },
  { name: "Herb-roasted chicken thighs", servings: 12, ingredients: [
    ["chicken thighs", 2.4, "kg"], ["garlic", 8, "piece"], ["lemons", 3, "piece"], ["rosemary", 1, "bunch"],
    ["thyme", 1, "bunch"], ["olive oil", 80, "ml"], ["sea salt", 2, "tsp"],
  ] },
  { name: "Pan-seared salmon with lemon butter", servings: 10, ingredients: [
    ["salmon fillet", 1.8, "kg"], ["butter", 150, "g"], ["lemons", 3, "piece"], ["asparagus", 1, "kg"],
    ["chives", 1, "bunch"],
  ] },
  { name: "Slow-roasted lamb shoulder", servings: 10, ingredients: [
    ["lamb shoulder", 3, "kg"], ["garlic", 10, "piece"], ["rosemary", 2, "bunch"], ["red wine", 500, "ml"],
    ["red onions", 4, "piece"], ["olive oil", 4, "tbsp"],
  ] },
  { name: "Wild mushroom risotto", servings: 10, ingredients: [
    ["arborio rice", 900, "g"], ["mixed mushrooms", 800, "g"], ["shallots", 4, "piece"], ["dry white wine", 250, "ml"],
    ["vegetable stock", 3, "l"], ["vegetarian hard cheese", 150, "g"], ["butter", 80, "g"],
  ] },
  { name: "Chickpea & spinach curry", servings: 12, ingredients: [
    ["chickpeas", 1.6, "kg"], ["baby spinach", 500, "g"], ["coconut milk", 800, "ml"], ["chopped tomatoes", 800, "g"],
    ["curry paste", 6, "tbsp"], ["coriander", 1, "bunch"], ["red onions", 3, "piece"],
  ] },
  { name: "Sesame-glazed tofu with pak choi", servings: 10, ingredients: [
    ["firm tofu", 1.5, "kg"], ["tamari", 6, "tbsp"], ["sesame oil", 3, "tbsp"], ["sesame seeds", 40, "g"],
    ["pak choi", 8, "piece"], ["fresh ginger", 40, "g"], ["garlic", 4, "piece"],
  ] },
  { name: "Dauphinoise potatoes", servings: 12, ingredients: [
    ["waxy potatoes", 2.5, "kg"], ["double cream", 600, "ml"], ["garlic", 3, "piece"], ["butter", 40, "g"],
    ["thyme", 1, "bunch"],
  ] },
  { name: "Roasted root vegetables", servings: 12, ingredients: [
    ["carrots", 1, "kg"], ["parsnips", 1, "kg"], ["beetroot", 600, "g"], ["olive oil", 6, "tbsp"],
    ["rosemary", 1, "bunch"], ["sea salt", 1, "tsp"],
  ] },
  { name: "Herb tabbouleh", servings: 12, ingredients: [
    ["bulgur wheat", 400, "g"], ["flat-leaf parsley", 3, "bunch"], ["mint", 2, "bunch"], ["cherry tomatoes", 500, "g"],
    ["cucumber", 1, "piece"], ["lemons", 3, "piece"], ["olive oil", 100, "ml"],
  ] },
  { name: "Green salad with mustard vinaigrette", servings: 12, ingredients: [
    ["mixed salad leaves", 600, "g"], ["dijon mustard", 2, "tbsp"], ["white wine vinegar", 4, "tbsp"],
    ["olive oil", 120, "ml"], ["shallots", 1, "piece"],
  ] },
  { name: "Lupin flatbread with tahini dip", servings: 12, ingredients: [
    ["lupin flour flatbread", 12, "piece"], ["tahini", 200, "g"], ["lemons", 2, "piece"], ["garlic", 2, "piece"],
    ["celery", 2, "piece"],
  ] },
  { name: "Tiramisu", servings: 12, ingredients: [
    ["mascarpone", 500, "g"], ["ladyfingers", 400, "g"], ["eggs", 4, "piece"], ["espresso", 300, "ml"],
    ["marsala", 80, "ml"], ["caster sugar", 120, "g"], ["cocoa powder", 2, "tbsp"],
  ] },
  { name: "Flourless dark chocolate torte", servings: 12, ingredients: [
    ["dark chocolate (70%)", 300, "g"], ["butter", 200, "g"], ["eggs", 5, "piece"], ["ground almonds", 150, "g"],
    ["caster sugar", 180, "g"],
  ] },
  { name: "Lemon tart", servings: 10, ingredients: [
    ["shortcrust pastry", 500, "g"], ["eggs", 6, "piece"], ["lemons", 5, "piece"], ["caster sugar", 200, "g"],
    ["double cream", 200, "ml"],
  ] },
  { name: "Coconut panna cotta with raspberries", servings: 10, ingredients: [
    ["coconut milk", 1.2, "l"], ["agar flakes", 2, "tbsp"], ["vanilla pod", 1, "piece"], ["caster sugar", 100, "g"],
    ["raspberries", 400, "g"],
  ] },
  { name: "Strawberries & Chantilly cream", servings: 12, ingredients: [
    ["strawberries", 1.5, "kg"], ["double cream", 600, "ml"], ["caster sugar", 60, "g"], ["vanilla pod", 1, "piece"],
    ["mint", 1, "bunch"],
  ] },
  { name: "Elderflower spritz", servings: 20, ingredients: [
    ["elderflower cordial", 500, "ml"], ["sparkling water", 4, "l"], ["limes", 4, "piece"], ["mint", 2, "bunch"],
  ] },
];

type RecipeName = (typeof RECIPES)[number]["name"];

/** Allergens and diet flags of a recipe, from what goes into it. */
const dietOf = (recipe: RecipeSpec) => {
  const items: PantryItem[] = recipe.ingredients.map(([name]) => PANTRY[name]);
  const allergens = [...new Set(items.flatMap((item) => item.allergens ?? []))].sort();
  const vegetarian = items.every((item) => item.origin !== "animal");
  return {
    allergens,
    vegetarian,
    vegan: vegetarian && items.every((item) => item.origin === undefined),
    glutenFree: !allergens.includes("gluten"),
    dairyFree: !allergens.includes("milk"),
  };
};

const MENUS: Readonly<Record<string, ReadonlyArray<readonly [Course, RecipeName]>>> = {
  wedding: [
    ["canape", "Smoked salmon blini"], ["canape", "Beetroot & goat's cheese crostini"],
    ["starter", "Heritage tomato & burrata salad"], ["main", "Beef Wellington"], ["main", "Wild mushroom risotto"],
    ["side", "Dauphinoise potatoes"], ["dessert", "Lemon tart"], ["drink", "Elderflower spritz"],
  ],
  corporateLunch: [
    ["starter", "Roasted butternut squash soup"], ["main", "Herb-roasted chicken thighs"],
    ["main", "Chickpea & spinach curry"], ["side", "Herb tabbouleh"], ["side", "Green salad with mustard vinaigrette"],
    ["dessert", "Strawberries & Chantilly cream"],
  ],
  reception: [
    ["canape", "Smoked salmon blini"], ["canape", "Vegetable spring rolls"], ["canape", "Peanut satay chicken skewers"],
    ["canape", "Beetroot & goat's cheese crostini"], ["drink", "Elderflower spritz"],
  ],
  dinner: [
    ["starter", "Moules marinières"], ["main", "Slow-roasted lamb shoulder"], ["side", "Roasted root vegetables"],
    ["dessert", "Flourless dark chocolate torte"],
  ],
  seafood: [
    ["starter", "Classic prawn cocktail"], ["main", "Pan-seared salmon with lemon butter"],
    ["side", "Green salad with mustard vinaigrette"], ["dessert", "Tiramisu"],
  ],
  plantBased: [
    ["starter", "Lupin flatbread with tahini dip"], ["main", "Sesame-glazed tofu with pak choi"],
    ["main", "Chickpea & spinach curry"], ["side", "Roasted root vegetables"],
    ["dessert", "Coconut panna cotta with raspberries"], ["drink", "Elderflower spritz"],
  ],
};

type MenuName = keyof typeof MENUS;

const CLIENTS = [
  { name: "Amelia Hartley", email: "amelia.hartley@example.com", phone: "+44 20 7946 0101", company: null },
  { name: "Brightwater Consulting", email: "events@brightwater.example", phone: "+44 20 7946 0187", company: "Brightwater Consulting Ltd" },
  { name: "Carlos Mendes", email: "carlos.mendes@example.org", phone: "+351 21 000 4412", company: null },
  { name: "Dunmore Heritage Trust", email: "bookings@dunmore-trust.example", phone: "+44 131 496 0550", company: "Dunmore Heritage Trust" },
  { name: "Elena Rossi", email: "elena.rossi@example.it", phone: null, company: null },
  { name: "Fernwood Primary School PTA", email: "pta@fernwood.example", phone: "+44 161 496 0777", company: "Fernwood Primary School" },
  { name: "Greenleaf Architects", email: "office@greenleaf.example", phone: "+44 117 496 0321", company: "Greenleaf Architects LLP" },
  { name: "Hannah & Tom Okafor", email: "hannah.okafor@example.com", phone: "+44 7700 900 412", company: null },
  { name: "Ironbridge Tech Summit", email: "catering@ironbridge-summit.example", phone: "+44 121 496 0900", company: "Ironbridge Events GmbH" },
  { name: "Jonas Weber", email: "jonas.weber@example.de", phone: "+49 30 901820", company: null },
  { name: "Kestrel Family Office", email: null, phone: "+44 20 7946 0999", company: "Kestrel Family Office" },
  { name: "Lakeside Folk Festival", email: "food@lakesidefolk.example", phone: "+44 15394 96000", company: "Lakeside Folk CIC" },
] as const;

type ClientName = (typeof CLIENTS)[number]["name"];

interface EventSpec {
  readonly name: string;
  readonly client: ClientName | null;
  readonly type: EventType | null;
  readonly status: EventStatus;
  /** Event date relative to today, in days. */
  readonly inDays: number;
  readonly guests: number;
  /** Major units of the organization's currency. */
  readonly pricePerHead: number;
  readonly menu: MenuName;
  readonly proposal?: ProposalStatus;
  readonly invoice?: { readonly status: InvoiceStatus; readonly staffHours: number; readonly depositShare?: number };
}

const EVENTS: readonly EventSpec[] = [
  { name: "Hartley summer garden party", client: "Amelia Hartley", type: "private_party", status: "completed", inDays: -120, guests: 60, pricePerHead: 38.5, menu: "reception", proposal: "approved", invoice: { status: "paid", staffHours: 18 } },
  { name: "Brightwater quarterly offsite lunch", client: "Brightwater Consulting", type: "corporate", status: "completed", inDays: -95, guests: 45, pricePerHead: 29, menu: "corporateLunch", proposal: "approved", invoice: { status: "paid", staffHours: 12 } },
  { name: "Mendes 50th birthday dinner", client: "Carlos Mendes", type: "birthday", status: "completed", inDays: -80, guests: 24, pricePerHead: 64, menu: "dinner", invoice: { status: "paid", staffHours: 16 } },
  { name: "Dunmore donors' reception", client: "Dunmore Heritage Trust", type: "corporate", status: "completed", inDays: -61, guests: 120, pricePerHead: 22.75, menu: "reception", proposal: "approved", invoice: { status: "paid", staffHours: 30 } },
  { name: "Rossi memorial tea", client: "Elena Rossi", type: "funeral", status: "completed", inDays: -44, guests: 40, pricePerHead: 18.5, menu: "plantBased", invoice: { status: "paid", staffHours: 8 } },
  { name: "Fernwood summer fair stall", client: "Fernwood Primary School PTA", type: "festival", status: "completed", inDays: -30, guests: 200, pricePerHead: 6.5, menu: "plantBased", invoice: { status: "sent", staffHours: 14 } },
  { name: "Greenleaf studio opening", client: "Greenleaf Architects", type: "corporate", status: "cancelled", inDays: -12, guests: 80, pricePerHead: 27, menu: "reception", proposal: "approved", invoice: { status: "void", staffHours: 10 } },
  { name: "Okafor wedding breakfast", client: "Hannah & Tom Okafor", type: "wedding", status: "confirmed", inDays: 21, guests: 110, pricePerHead: 72, menu: "wedding", proposal: "approved", invoice: { status: "sent", staffHours: 44, depositShare: 0.3 } },
  { name: "Ironbridge Tech Summit, day 1", client: "Ironbridge Tech Summit", type: "conference", status: "confirmed", inDays: 35, guests: 350, pricePerHead: 24, menu: "corporateLunch", proposal: "approved", invoice: { status: "sent", staffHours: 60, depositShare: 0.5 } },
  { name: "Ironbridge Tech Summit, day 2", client: "Ironbridge Tech Summit", type: "conference", status: "confirmed", inDays: 36, guests: 320, pricePerHead: 24, menu: "plantBased", proposal: "approved", invoice: { status: "draft", staffHours: 56 } },
  { name: "Weber anniversary dinner", client: "Jonas Weber", type: "private_party", status: "confirmed", inDays: 14, guests: 16, pricePerHead: 85, menu: "seafood", invoice: { status: "draft", staffHours: 9 } },
  { name: "Kestrel board dinner", client: "Kestrel Family Office", type: "corporate", status: "proposed", inDays: 42, guests: 14, pricePerHead: 95, menu: "dinner", proposal: "sent" },
  { name: "Lakeside Folk Festival traders' kitchen", client: "Lakeside Folk Festival", type: "festival", status: "proposed", inDays: 70, guests: 400, pricePerHead: 11, menu: "plantBased", proposal: "sent" },
  { name: "Brightwater winter party", client: "Brightwater Consulting", type: "corporate", status: "inquiry", inDays: 90, guests: 90, pricePerHead: 42, menu: "reception", proposal: "draft" },
  { name: "Hartley christening lunch", client: "Amelia Hartley", type: "private_party", status: "inquiry", inDays: 55, guests: 35, pricePerHead: 32, menu: "corporateLunch" },
  { name: "Dunmore gala dinner", client: "Dunmore Heritage Trust", type: "other", status: "cancelled", inDays: 28, guests: 150, pricePerHead: 58, menu: "seafood", proposal: "declined" },
  { name: "Greenleaf team away day", client: "Greenleaf Architects", type: "corporate", status: "completed", inDays: -7, guests: 30, pricePerHead: 26, menu: "corporateLunch", invoice: { status: "sent", staffHours: 8 } },
  { name: "Tasting evening (walk-in enquiry)", client: null, type: null, status: "inquiry", inDays: 20, guests: 8, pricePerHead: 45, menu: "seafood" },
  { name: "Okafor rehearsal dinner", client: "Hannah & Tom Okafor", type: "wedding", status: "confirmed", inDays: 20, guests: 30, pricePerHead: 48, menu: "dinner", invoice: { status: "paid", staffHours: 10 } },
];

const DAY_MS = 86_400_000;
const FOOD_TAX_BASIS_POINTS = 1_000;
const SERVICE_TAX_BASIS_POINTS = 2_000;
const PAYMENT_TERMS_DAYS = 30;

const calendarDate = (today: Date, days: number): string => new Date(today.getTime() + days * DAY_MS).toISOString().slice(0, 10);

/** Portions per dish: each course's guests shared between that course's dishes. */
const dishesOf = (menu: MenuName, guests: number) => {
  const dishes = MENUS[menu]!;
  return dishes.map(([course, recipe]) => {
    const sameCourse = dishes.filter(([other]) => other === course).length;
    return { course, recipe, servings: Math.ceil(guests / sameCourse) };
  });
};

/** An invoice's lines: food per head, service staff by the hour, hire and delivery. */
const invoiceLines = (event: EventSpec, staffHours: number, minor: (major: number) => number) => [
  { description: `Catering: ${event.guests} guests, ${event.name}`, quantityMilli: event.guests * 1000, unitPriceMinor: minor(event.pricePerHead), taxRateBasisPoints: FOOD_TAX_BASIS_POINTS },
  { description: "Service staff (hours)", quantityMilli: Math.round(staffHours * 1000), unitPriceMinor: minor(28.5), taxRateBasisPoints: SERVICE_TAX_BASIS_POINTS },
  { description: "Crockery, glassware and linen hire", quantityMilli: 1000, unitPriceMinor: minor(Math.max(60, event.guests * 1.75)), taxRateBasisPoints: SERVICE_TAX_BASIS_POINTS },
  { description: "Delivery and set-up", quantityMilli: 1000, unitPriceMinor: minor(85), taxRateBasisPoints: SERVICE_TAX_BASIS_POINTS },
];

/** What has been paid on an invoice in a given status. */
const amountPaid = (status: InvoiceStatus, totalMinor: number, depositShare: number | undefined): number => {
  if (status === "paid") return totalMinor;
  if (status === "sent" && depositShare !== undefined) return Math.round(totalMinor * depositShare);
  return 0;
};

/**
 * Inserts rows one by one and returns their ids in order. Only for the few rows whose ids later
 * rows need: `insertMany` on PostgreSQL reports just one id here.
 */
const insertEach = <Row extends object>(
  tx: OrgSql,
  entity: EntityName<Row>,
  rows: ReadonlyArray<Omit<RequiredEntityData<Row>, "organization">>,
) => Effect.forEach(rows, (row) => tx.insert(entity, row));

const insertCatalogue = Effect.fnUntraced(function* (tx: OrgSql) {
  const recipeIds = yield* insertEach(tx, RecipeEntity, RECIPES.map((recipe) => {
    const diet = dietOf(recipe);
    return {
      name: recipe.name, servings: recipe.servings, allergens: diet.allergens,
      vegetarian: diet.vegetarian, vegan: diet.vegan, glutenFree: diet.glutenFree, dairyFree: diet.dairyFree,
    };
  }));
  yield* tx.insertMany(IngredientEntity, RECIPES.flatMap((recipe, index) =>
    recipe.ingredients.map(([name, quantity, unit], position) => ({ recipe: recipeIds[index]!, position, name, quantity, unit })),
  ));
  const clientIds = yield* insertEach(tx, ClientEntity, CLIENTS.map((client) => ({ ...client })));
  return {
    recipeId: new Map(RECIPES.map((recipe, index) => [recipe.name, recipeIds[index]!])),
    clientId: new Map(CLIENTS.map((client, index) => [client.name as string, clientIds[index]!])),
  };
});

/** Seeds the demo data set into the organization of `tx` (one transaction, through its scoped SQL). */
export const seedDemo = Effect.fnUntraced(function* (tx: OrgSql) {
  const { currency } = tx.scope;
  const scale = 10 ** currencyExponent(currency);
  const minor = (major: number) => Math.round(major * scale);
  const today = new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
  const now = Date.now();
  /** A moment `days` from today (plus minutes, to order rows of one day), never in the future. */
  const at = (days: number, minutes = 0) => new Date(Math.min(today.getTime() + days * DAY_MS + minutes * 60_000, now));
  /** When each event was taken on: about two months ahead, or in the past week for short-notice ones. */
  const bookedInDays = EVENTS.map((event, index) => Math.min(event.inDays - 60, -1 - (index % 7)));

  const { recipeId, clientId } = yield* insertCatalogue(tx);

  const eventIds = yield* insertEach(tx, EventEntity, EVENTS.map((event, index) => ({
    client: event.client === null ? null : clientId.get(event.client)!,
    name: event.name,
    eventDate: calendarDate(today, event.inDays),
    guests: event.guests,
    pricePerHeadMinor: minor(event.pricePerHead),
    eventType: event.type,
    status: event.status,
    createdAt: at(bookedInDays[index]!, index),
  })));

  yield* tx.insertMany(DishEntity, EVENTS.flatMap((event, index) =>
    dishesOf(event.menu, event.guests).map((dish, position) => ({
      event: eventIds[index]!, recipe: recipeId.get(dish.recipe)!, position, course: dish.course, servings: dish.servings,
    })),
  ));

  // Proposals go out the day after booking; approved ones come back within the day.
  const proposed = EVENTS.flatMap((event, index) => (event.proposal ? [{ event, index }] : []));
  yield* tx.insertMany(ProposalEntity, proposed.map(({ event, index }) => ({
    event: eventIds[index]!, title: `${event.name}: ${event.guests} guests`, status: event.proposal!,
    totalMinor: minor(event.pricePerHead) * event.guests,
    createdAt: at(bookedInDays[index]! + 1, index),
    approvedAt: event.proposal === "approved" ? at(bookedInDays[index]! + 1, 8 * 60 + index) : null,
  })));

  const [{ count: existingInvoices } = { count: 0 }] = yield* tx.select<{ count: number }>({
    columns: "count(*)::int as count",
    from: "invoices",
    as: "i",
  });
  const invoiced = EVENTS.flatMap((event, index) => (event.invoice ? [{ event, invoice: event.invoice, eventId: eventIds[index]! }] : []));
  const invoices = invoiced.map(({ event, invoice, eventId }, index) => {
    const lines = invoiceLines(event, invoice.staffHours, minor);
    // Past events are billed just after they happen; upcoming ones get their invoice (often a deposit) now.
    const issueInDays = event.inDays < 0 ? Math.min(event.inDays + 2, 0) : -3;
    return {
      lines,
      row: {
        client: event.client === null ? null : clientId.get(event.client)!,
        event: eventId,
        number: `INV-${String(existingInvoices + index + 1).padStart(5, "0")}`,
        status: invoice.status,
        currency,
        issueDate: calendarDate(today, issueInDays),
        dueDate: calendarDate(today, issueInDays + PAYMENT_TERMS_DAYS),
        amountPaidMinor: amountPaid(invoice.status, invoiceTotals(lines, 0).total, invoice.depositShare),
        createdAt: at(issueInDays, 9 * 60 + index),
      },
    };
  });
  const invoiceIds = yield* insertEach(tx, InvoiceEntity, invoices.map((invoice) => invoice.row));
  yield* tx.insertMany(InvoiceLineItemEntity, invoices.flatMap((invoice, index) =>
    invoice.lines.map((line, position) => ({ invoice: invoiceIds[index]!, position, ...line })),
  ));

  return { recipes: RECIPES.length, clients: CLIENTS.length, events: EVENTS.length, invoices: invoices.length } satisfies DemoCounts;
});

/**
 * The demo data as a use case: what a sandbox ships when it is opened or reset (`Sandbox`), and
 * what `platter seed demo` and the first `npm start` write into an organization the operator names.
 */
export const DemoData = {
  /** The demo data seeded into the scope's organization, in one transaction (no webhook messages, no audit row: it is no business activity). */
  seed: (scope: OrgScope) => scopedTransaction(scope, seedDemo),
};
