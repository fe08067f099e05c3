// `node scripts/unused-exports.js [--types]`: the exports no other module imports (decision 0420),
// one `file<TAB>kind<TAB>name` a line, read with TypeScript's compiler API over both projects (the
// server's tsconfig.json and renderer/tsconfig.json). Values only unless --types: an exported type
// that appears in an exported signature is part of that signature and may stay.
const path = require("node:path");
// TypeScript 7 has no JavaScript API yet; the typescript5 alias (openapi-typescript's) has.
const ts = require("typescript5");

const root = path.resolve(__dirname, "..");
const withTypes = process.argv.includes("--types");
const used = new Set();
const exported = new Map();
const rel = (file) => path.relative(root, file).split(path.sep).join("/");

function readProject(tsconfig) {
  const config = ts.getParsedCommandLineOfConfigFile(tsconfig, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  const program = ts.createProgram(config.fileNames, config.options);
  const checker = program.getTypeChecker();
  const origin = (symbol) => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    const declaration = target.declarations?.[0];
    return declaration ? `${rel(declaration.getSourceFile().fileName)}#${target.name}` : null;
  };
  const markEveryExport = (moduleSymbol) => {
    for (const symbol of moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : []) used.add(origin(symbol));
  };
  for (const file of program.getSourceFiles()) {
    const name = rel(file.fileName);
    if (name.startsWith("node_modules/") || name.startsWith("..") || file.isDeclarationFile) continue;
    const moduleSymbol = checker.getSymbolAtLocation(file);
    if (moduleSymbol && !exported.has(name)) {
      exported.set(name, checker.getExportsOfModule(moduleSymbol).map((symbol) => ({ symbol, key: origin(symbol), checker })));
    }
    const visit = (node) => {
      const specifier =
        (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier
          ? node.moduleSpecifier
          : ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword
            ? node.arguments[0]
            : ts.isImportTypeNode(node)
              ? node.argument.literal
              : null;
      if (specifier && ts.isStringLiteral(specifier)) {
        const target = checker.getSymbolAtLocation(specifier);
        const mark = (identifier) => {
          const symbol = checker.getSymbolAtLocation(identifier);
          if (symbol) used.add(origin(symbol));
        };
        if (ts.isImportDeclaration(node)) {
          const clause = node.importClause;
          if (clause?.name) mark(clause.name);
          const bindings = clause?.namedBindings;
          if (bindings && ts.isNamespaceImport(bindings)) markEveryExport(target);
          if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) mark(element.propertyName ?? element.name);
        } else if (ts.isExportDeclaration(node) && node.exportClause && ts.isNamedExports(node.exportClause)) {
          for (const element of node.exportClause.elements) mark(element.propertyName ?? element.name);
        } else {
          // export * from, import("..."), import type nodes: every export of the module counts as used.
          markEveryExport(target);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
}

readProject(path.join(root, "tsconfig.json"));
readProject(path.join(root, "renderer", "tsconfig.json"));
for (const [file, symbols] of [...exported].sort(([a], [b]) => a.localeCompare(b))) {
  for (const { symbol, key, checker } of symbols) {
    if (used.has(key)) continue;
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    const isType = (target.flags & (ts.SymbolFlags.Value | ts.SymbolFlags.Class)) === 0;
    if (isType && !withTypes) continue;
    process.stdout.write(`${file}\t${isType ? "type" : "value"}\t${symbol.name}\n`);
  }
}
