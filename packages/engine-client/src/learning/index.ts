// Filled by the learning work; re-exported from the package's main entry.
export {};
