// Filled by the summarise work; re-exported from the package's main entry.
export {};
