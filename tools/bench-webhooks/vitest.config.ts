import { sharedTestConfig } from "../../vitest.shared.ts";
export default sharedTestConfig;
