// `@conch/nacre/command`: the ⌘K action on cmdk, apart from the core so that a host with a palette of its own
// carries none of it.
/**
 * cmdk's `Command`, re-exported: compose `CompactCommandItem` into a palette built with this one, so that
 * both share one copy of cmdk (an item only works inside its own copy's `Command`).
 */
export { Command } from "cmdk";
export {
  CommandMenu,
  type CommandMenuProps,
  CommandMenuShortcut,
  CompactCommandItem,
  type CompactCommandItemProps,
  commandMenuShortcutLabel,
  compactActionOf,
  compactUnavailableText,
  defaultCommandMessages,
  isApplePlatform,
  isCommandMenuShortcut,
} from "./command.js";
