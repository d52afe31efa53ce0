// Filled by the transcript work; re-exported from the package's main entry.
export {};
