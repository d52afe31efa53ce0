import { ComposerHint, ComposerInput, ComposerRoot, ComposerSubmit } from "../composer.js";

/**
 * The parts by their short names (`Composer.Root` = `ComposerRoot`): a plain object, which weighs less in
 * the core bundle than a module namespace.
 */
export const Composer = {
  Hint: ComposerHint,
  Input: ComposerInput,
  Root: ComposerRoot,
  Submit: ComposerSubmit,
} as const;
