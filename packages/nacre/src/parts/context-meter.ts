export {
  ContextMeterIndicator as Indicator,
  ContextMeterLabel as Label,
  ContextMeterRoot as Root,
} from "../context-meter.js";
