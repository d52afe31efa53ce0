/** A table a section prints: a title, a header row and rows of cells. */
export interface Table {
  readonly title: string;
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
  /** Lines printed under the table. */
  readonly notes?: readonly string[];
}

/** A Markdown table, so the output pastes into an issue or docs/bench.md as it is. */
export function formatTable(table: Table): string {
  const widths = table.header.map((cell, column) =>
    Math.max(cell.length, ...table.rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(" | ")} |`;
  const rule = `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`;
  const notes = table.notes?.length ? `\n\n${table.notes.map((note) => `- ${note}`).join("\n")}` : "";
  return `### ${table.title}\n\n${line(table.header)}\n${rule}\n${table.rows.map(line).join("\n")}${notes}\n`;
}
