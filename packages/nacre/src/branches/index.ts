// `@conch/nacre/branches`: edit a message in place, ask for another answer, and move between versions (the
// picker), apart from the core so that a page without versions carries none of it. The engine must declare
// the `branches` capability; the logic is the conversation store's (`edit`, `regenerate`, `selectBranch`).
export {
  BranchMessage,
  type BranchMessageProps,
  type BranchPickerButtonProps,
  BranchPickerCount,
  type BranchPickerCountProps,
  BranchPickerNext,
  BranchPickerPrevious,
  BranchPickerRoot,
  type BranchPickerRootProps,
  defaultBranchMessages,
  MessageEdit,
  MessageEditor,
  type MessageEditorProps,
  type MessageEditProps,
  MessageRegenerate,
  type MessageRegenerateProps,
  renderBranchMessage,
  siblingsOf,
} from "./branches.js";
export * as BranchPicker from "./parts.js";
