export {
  HealthNotesItem as Item,
  HealthNotesList as List,
  HealthNotesRoot as Root,
  HealthNotesTitle as Title,
} from "../health-notes.js";
