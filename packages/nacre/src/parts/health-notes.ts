import { HealthNotesItem, HealthNotesList, HealthNotesRoot, HealthNotesTitle } from "../health-notes.js";

/**
 * The parts by their short names (`HealthNotes.Root` = `HealthNotesRoot`): a plain object, which weighs less in
 * the core bundle than a module namespace.
 */
export const HealthNotes = {
  Item: HealthNotesItem,
  List: HealthNotesList,
  Root: HealthNotesRoot,
  Title: HealthNotesTitle,
} as const;
