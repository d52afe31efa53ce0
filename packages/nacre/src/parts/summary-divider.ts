export {
  SummaryDividerContent as Content,
  SummaryDividerRoot as Root,
  SummaryDividerTrigger as Trigger,
} from "../summary-divider.js";
