export {
  BranchPickerCount as Count,
  BranchPickerNext as Next,
  BranchPickerPrevious as Previous,
  BranchPickerRoot as Root,
} from "./branches.js";
