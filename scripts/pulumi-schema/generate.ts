/**
 * Writes the Pulumi package schema of the rayshift plugin package
 * (`lib/pulumi/plugin/generated/schema.json`) from the TypeScript types of the Pulumi components:
 * each component's args become its input properties (their TSDoc the descriptions), and the
 * outputs the component registers become its output properties. `pulumi package add` generates
 * every language's SDK from this schema (docs/pulumi-plugin.md). Run with
 * `npm run generate:pulumi-schema`; test/pulumi/plugin-schema.test.ts fails when the file is stale.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { PLUGIN_COMPONENTS, PLUGIN_PACKAGE, PLUGIN_SCHEMA_PATH } from '../../lib/pulumi/plugin/components';
import { documentation, PropertySpec, SchemaTypes } from './type-specs';

/** The schema text for the sources under `root`: 2-space JSON and a final newline. */
export function renderPulumiSchema(root: string): string {
  const entry = path.join(root, 'lib', 'pulumi', 'index.ts');
  const config = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  const program = ts.createProgram([entry], { ...config?.options, noEmit: true });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
  const exported = new Map(checker.getExportsOfModule(module).map((s) => [s.name, s]));
  const types = new SchemaTypes(checker, PLUGIN_PACKAGE.name);
  const resources: Record<string, unknown> = {};
  for (const component of PLUGIN_COMPONENTS) {
    const exportedSymbol = exported.get(component.name);
    if (exportedSymbol === undefined) throw new Error(`lib/pulumi/index.ts exports no ${component.name}`);
    const symbol = exportedSymbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exportedSymbol) : exportedSymbol;
    const declaration = symbol.valueDeclaration;
    if (declaration === undefined || !ts.isClassDeclaration(declaration)) throw new Error(`${component.name} is not a class`);
    const classType = checker.getTypeAtLocation(declaration);
    const ctor = checker.getSignaturesOfType(checker.getTypeOfSymbolAtLocation(symbol, declaration), ts.SignatureKind.Construct)[0];
    const argsParameter = ctor?.getParameters().find((p) => p.name === 'args');
    if (argsParameter === undefined) throw new Error(`${component.name}'s constructor has no args parameter`);
    const args = types.objectProperties(checker.getTypeOfSymbolAtLocation(argsParameter, declaration), `${component.name}Args`);
    const outputs: Record<string, PropertySpec> = {};
    for (const name of component.outputs) {
      const member = classType.getProperty(name);
      if (member === undefined) throw new Error(`${component.name} has no output ${name}`);
      const { plain: _plain, ...spec } = types.propertySpec(outputType(checker.getTypeOfSymbolAtLocation(member, declaration), checker), `${component.name}.${name}`);
      const description = documentation(member, checker);
      outputs[name] = description ? { ...spec, description } : spec;
    }
    const secrets = new Set<string>(component.secretInputs);
    resources[component.token] = {
      isComponent: true,
      description: documentation(symbol, checker),
      inputProperties: Object.fromEntries(Object.entries(args.properties).map(([k, v]) => [k, secrets.has(k) ? { ...v, secret: true } : v])),
      ...(args.required.length > 0 ? { requiredInputs: args.required } : {}),
      properties: outputs,
      required: component.outputs.filter((o) => !component.optionalOutputs.includes(o)),
    };
  }
  const schema = {
    name: PLUGIN_PACKAGE.name,
    displayName: PLUGIN_PACKAGE.displayName,
    description: PLUGIN_PACKAGE.description,
    version: readVersion(root),
    meta: { moduleFormat: '(.*)' },
    language: { python: { packageName: PLUGIN_PACKAGE.pythonPackage, respectSchemaVersion: true, requires: { pulumi: '>=3.0.0,<4.0.0' } } },
    resources,
    types: Object.fromEntries(Object.entries(types.types).sort(([a], [b]) => a.localeCompare(b))),
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}

/** `T` of an output's `pulumi.Output<T>`, or the type itself. */
function outputType(type: ts.Type, checker: ts.TypeChecker): ts.Type {
  const members = type.isUnion() ? type.types : [type];
  for (const m of members) {
    const symbol = m.getSymbol();
    if (symbol?.name === 'OutputInstance' || symbol?.name === 'Output') return checker.getTypeArguments(m as ts.TypeReference)[0] ?? type;
  }
  if (type.isIntersection()) {
    for (const m of type.types) if (m.getSymbol()?.name === 'OutputInstance') return checker.getTypeArguments(m as ts.TypeReference)[0] ?? type;
  }
  return type;
}

function readVersion(root: string): string {
  return (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

if (require.main === module) {
  const root = path.resolve(__dirname, '..', '..');
  fs.writeFileSync(path.join(root, PLUGIN_SCHEMA_PATH), renderPulumiSchema(root));
  process.stderr.write(`wrote ${PLUGIN_SCHEMA_PATH}\n`);
}
