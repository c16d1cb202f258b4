/**
 * npm run openapi:schemas: the OpenAPI component schemas of the answers'
 * shapes, read from src/shared/types.ts with the TypeScript parser (field
 * descriptions from their JSDoc lines) and written to
 * build/site/openapi-schemas.json, which is checked in. The build reads only that
 * file, so neither `npm run build` nor `npm start` needs TypeScript, which is
 * a development dependency; test/build/openapi-schemas.test.ts fails, naming
 * this command, when the file is not what types.ts gives. A type this cannot
 * express fails here, so a field added or renamed in types.ts reaches the
 * document without a second copy to edit.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { commandLine } from '../../lib/command-line.ts';
import { COMPONENTS, type ComponentName, SCHEMAS_FILE } from './openapi.ts';

export const TYPES_FILE = new URL('../../src/shared/types.ts', import.meta.url);

type Schema = Record<string, unknown>;

class SchemaError extends Error {}

const ref = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` });

/**
 * Component schemas from the shapes in types.ts (`source`,
 * default the file), closed objects with their required fields.
 */
export function derivedSchemas(source = readFileSync(TYPES_FILE, 'utf8')): Record<ComponentName, Schema> {
  const file = ts.createSourceFile('types.ts', source, ts.ScriptTarget.ES2022, true);
  const declarations = new Map<string, ts.InterfaceDeclaration | ts.TypeAliasDeclaration>();
  for (const statement of file.statements) {
    if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement))
      declarations.set(statement.name.text, statement);
  }
  const componentOf = new Map<string, ComponentName>(
    Object.entries(COMPONENTS).map(([c, t]) => [t, c as ComponentName]),
  );
  const docOf = (node: ts.Node) =>
    ts
      .getJSDocCommentsAndTags(node)
      .map((d) => (ts.isJSDoc(d) ? ts.getTextOfJSDocComment(d.comment) : undefined))
      .filter((t): t is string => !!t)
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim();

  function typeSchema(node: ts.TypeNode, where: string): Schema {
    switch (node.kind) {
      case ts.SyntaxKind.StringKeyword:
        return { type: 'string' };
      case ts.SyntaxKind.BooleanKeyword:
        return { type: 'boolean' };
      case ts.SyntaxKind.NumberKeyword:
        return { type: 'number' };
    }
    if (ts.isArrayTypeNode(node)) return { type: 'array', items: typeSchema(node.elementType, where) };
    // `T | null`, T a string or a number: an id the source may not give.
    if (
      ts.isUnionTypeNode(node) &&
      node.types.length === 2 &&
      ts.isLiteralTypeNode(node.types[1]) &&
      node.types[1].literal.kind === ts.SyntaxKind.NullKeyword
    ) {
      const schema = typeSchema(node.types[0], where);
      if (typeof schema.type === 'string' && schema.type !== 'object' && schema.type !== 'array')
        return { ...schema, type: [schema.type, 'null'] };
    }
    if (ts.isUnionTypeNode(node) && node.types.every((t) => ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal))) {
      return {
        type: 'string',
        enum: node.types.map((t) => ((t as ts.LiteralTypeNode).literal as ts.StringLiteral).text),
      };
    }
    if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName)) {
      const name = node.typeName.text;
      const args = node.typeArguments ?? [];
      if (name === 'Record' && args.length === 2 && args[0].kind === ts.SyntaxKind.StringKeyword) {
        return { type: 'object', additionalProperties: typeSchema(args[1], where) };
      }
      const component = componentOf.get(name);
      if (component && args.length === 0) return ref(component);
    }
    throw new SchemaError(`openapi: cannot express the type \`${node.getText()}\` of ${where} as a schema`);
  }

  /** Own and inherited properties, in declaration order (inherited first). */
  function members(decl: ts.InterfaceDeclaration): ts.PropertySignature[] {
    const inherited = (decl.heritageClauses ?? []).flatMap((clause) =>
      clause.types.flatMap((t) => {
        const base = ts.isIdentifier(t.expression) ? declarations.get(t.expression.text) : undefined;
        if (!base || !ts.isInterfaceDeclaration(base))
          throw new SchemaError(`openapi: ${decl.name.text} extends an unknown type`);
        return members(base);
      }),
    );
    const own = decl.members.map((m) => {
      if (!ts.isPropertySignature(m) || !m.type || !ts.isIdentifier(m.name))
        throw new SchemaError(`openapi: ${decl.name.text} has a member that is not a plain property`);
      return m;
    });
    const ownNames = new Set(own.map((m) => (m.name as ts.Identifier).text));
    return [...inherited.filter((m) => !ownNames.has((m.name as ts.Identifier).text)), ...own];
  }

  const schemas = {} as Record<ComponentName, Schema>;
  for (const [component, typeName] of Object.entries(COMPONENTS) as [ComponentName, string][]) {
    const decl = declarations.get(typeName);
    if (!decl) throw new SchemaError(`openapi: src/shared/types.ts no longer declares ${typeName}`);
    const description = docOf(decl);
    if (ts.isTypeAliasDeclaration(decl)) {
      schemas[component] = { ...(description ? { description } : {}), ...typeSchema(decl.type, typeName) };
      continue;
    }
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    for (const m of members(decl)) {
      const name = (m.name as ts.Identifier).text;
      const doc = docOf(m);
      properties[name] = { ...(doc ? { description: doc } : {}), ...typeSchema(m.type!, `${typeName}.${name}`) };
      if (!m.questionToken) required.push(name);
    }
    // Closed objects: a field the service starts sending without a change here is drift, and the contract tests say so.
    schemas[component] = {
      type: 'object',
      ...(description ? { description } : {}),
      properties,
      required,
      additionalProperties: false,
    };
  }
  return schemas;
}

/** The text of build/site/openapi-schemas.json for `source` (default src/shared/types.ts). */
export function schemasJson(source?: string): string {
  return `${JSON.stringify(derivedSchemas(source), null, 2)}\n`;
}

const USAGE = `usage: npm run openapi:schemas

Derives the OpenAPI component schemas from the shapes in src/shared/types.ts
(with TypeScript, a development dependency) and writes them to
build/site/openapi-schemas.json, which the build reads. Run it after changing
types.ts and commit the file with the change; the tests fail until then.

  -h, --help   this text`;

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  commandLine({ name: 'openapi:schemas', usage: USAGE, options: {} });
  const file = fileURLToPath(SCHEMAS_FILE);
  const text = schemasJson();
  const changed = !existsSync(file) || readFileSync(file, 'utf8') !== text;
  if (changed) writeFileSync(file, text);
  console.log(`${path.relative(process.cwd(), file)}: ${changed ? 'written' : 'already up to date'}`);
}
