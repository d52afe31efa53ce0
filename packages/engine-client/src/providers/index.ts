// Filled by the providers work; re-exported from the package's main entry.
export {};
