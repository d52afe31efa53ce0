import { ContextMeterIndicator, ContextMeterLabel, ContextMeterRoot } from "../context-meter.js";

/**
 * The parts by their short names (`ContextMeter.Root` = `ContextMeterRoot`): a plain object, which weighs less in
 * the core bundle than a module namespace.
 */
export const ContextMeter = {
  Indicator: ContextMeterIndicator,
  Label: ContextMeterLabel,
  Root: ContextMeterRoot,
} as const;
