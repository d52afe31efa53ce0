import { SummaryDividerContent, SummaryDividerRoot, SummaryDividerTrigger } from "../summary-divider.js";

/**
 * The parts by their short names (`SummaryDivider.Root` = `SummaryDividerRoot`): a plain object, which weighs less in
 * the core bundle than a module namespace.
 */
export const SummaryDivider = {
  Content: SummaryDividerContent,
  Root: SummaryDividerRoot,
  Trigger: SummaryDividerTrigger,
} as const;
