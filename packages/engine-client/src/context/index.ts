// Filled by the context work; re-exported from the package's main entry.
export {};
