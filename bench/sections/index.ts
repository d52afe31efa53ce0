import type { BenchSection } from "../section.js";
import { estimateSection } from "./estimate.js";
import { hostileSection } from "./hostile.js";
import { planningSection } from "./planning.js";
import { promptCacheSection } from "./prompt-cache.js";
import { realServerSection } from "./real-server.js";
import { redactionSection } from "./redaction.js";
import { scaleSection } from "./scale.js";
import { storeSection } from "./store.js";
import { uiSection } from "./ui.js";

/** Every section of `pnpm bench`, in the order they run and print. New sections (bench/ui/, ...) are added here. */
export const sections: readonly BenchSection[] = [
  planningSection,
  promptCacheSection,
  estimateSection,
  uiSection,
  storeSection,
  redactionSection,
  scaleSection,
  realServerSection,
  hostileSection,
];
