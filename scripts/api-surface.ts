// The public surface of every package, checked in: one list per entry point of its package.json `exports`
// (`packages/<name>/api-surface/<entry>.txt`, `index.txt` for "."), one exported name a line, `type ` before a
// name that is only a type. `api-surface.test.ts` fails when an export is added or removed without its list.
//
//   node --conditions=source --import tsx scripts/api-surface.ts          # print what differs
//   node --conditions=source --import tsx scripts/api-surface.ts --write  # rewrite the lists (pnpm api-surface)
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const updateCommand = "pnpm api-surface --write";

/** One entry point of a package: its subpath, its source file and the list it is checked against. */
export interface EntryPoint {
  readonly packageName: string;
  readonly packageDir: string;
  /** The subpath as in `exports`: ".", "./mock", "./node". */
  readonly subpath: string;
  readonly sourceFile: string;
  readonly listFile: string;
  /** A private package's entries are listed too, but need no documentation. */
  readonly private: boolean;
}

interface PackageJson {
  readonly name: string;
  readonly private?: boolean;
  readonly exports?: Record<string, string | { readonly source?: string }>;
}

/** Every entry point with a TypeScript `source` condition, in every package under `packages/`. */
export function entryPoints(root = repositoryRoot): EntryPoint[] {
  const entries: EntryPoint[] = [];
  for (const folder of readdirSync(join(root, "packages")).sort()) {
    const packageDir = join(root, "packages", folder);
    const manifestPath = join(packageDir, "package.json");
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as PackageJson;
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      const source = typeof target === "string" ? undefined : target.source;
      if (source === undefined || !/\.tsx?$/.test(source)) continue;
      const listName = subpath === "." ? "index" : subpath.replace(/^\.\//, "").replaceAll("/", "-");
      entries.push({
        packageName: manifest.name,
        packageDir,
        subpath,
        sourceFile: join(packageDir, source),
        listFile: join(packageDir, "api-surface", `${listName}.txt`),
        private: manifest.private === true,
      });
    }
  }
  return entries;
}

/** The exported names of each entry, sorted, `type X` for a name with no value, from one TypeScript program. */
export function exportedNames(entries: readonly EntryPoint[]): Map<EntryPoint, string[]> {
  const program = ts.createProgram(
    entries.map((entry) => entry.sourceFile),
    {
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      customConditions: ["source"],
      target: ts.ScriptTarget.ES2022,
      jsx: ts.JsxEmit.ReactJSX,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      noResolve: false,
      types: [],
    },
  );
  const checker = program.getTypeChecker();
  const result = new Map<EntryPoint, string[]>();
  for (const entry of entries) {
    const sourceFile = program.getSourceFile(entry.sourceFile);
    const moduleSymbol = sourceFile && checker.getSymbolAtLocation(sourceFile);
    if (!moduleSymbol) throw new Error(`TypeScript cannot read ${entry.sourceFile}`);
    const names = checker.getExportsOfModule(moduleSymbol).map((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      return target.flags & ts.SymbolFlags.Value ? symbol.getName() : `type ${symbol.getName()}`;
    });
    result.set(
      entry,
      names.sort((a, b) => bare(a).localeCompare(bare(b), "en")),
    );
  }
  return result;
}

/** The name without its `type ` marker. */
export function bare(line: string): string {
  return line.replace(/^type /, "");
}

/** The checked-in list of an entry; empty when there is none yet. */
export function readList(entry: EntryPoint): string[] {
  if (!existsSync(entry.listFile)) return [];
  return readFileSync(entry.listFile, "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

function listText(entry: EntryPoint, names: readonly string[]): string {
  const label = entry.subpath === "." ? entry.packageName : `${entry.packageName}/${entry.subpath.slice(2)}`;
  return `# ${label}: ${names.length} names. Rewrite with \`${updateCommand}\`; document each in README.md or docs/.\n${names.join("\n")}\n`;
}

/** Rewrites every list from the code, and removes lists of entries that are gone. */
export function writeLists(root = repositoryRoot): void {
  const entries = entryPoints(root);
  for (const [entry, names] of exportedNames(entries)) {
    mkdirSync(dirname(entry.listFile), { recursive: true });
    writeFileSync(entry.listFile, listText(entry, names));
  }
  const kept = new Set(entries.map((entry) => entry.listFile));
  for (const packageDir of new Set(entries.map((entry) => entry.packageDir))) {
    const folder = join(packageDir, "api-surface");
    for (const file of readdirSync(folder)) if (!kept.has(join(folder, file))) rmSync(join(folder, file));
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes("--write")) {
    writeLists();
    console.log("api-surface lists rewritten; review `git diff -- packages/*/api-surface` and document new names.");
  } else {
    const entries = entryPoints();
    let differ = 0;
    for (const [entry, names] of exportedNames(entries)) {
      const listed = readList(entry);
      const added = names.filter((name) => !listed.includes(name));
      const removed = listed.filter((name) => !names.includes(name));
      if (added.length + removed.length === 0) continue;
      differ++;
      console.log(`${entry.packageName} ${entry.subpath}: +${added.join(" +")} -${removed.join(" -")}`);
    }
    if (differ > 0) console.log(`Run \`${updateCommand}\` to accept.`);
  }
}
