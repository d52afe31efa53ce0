"use client";
// The components and hooks arrive with the Nacre work; the package builds and resolves from day one.
export {};
