/**
 * Maps the TypeScript types of the Pulumi components' args to Pulumi package-schema type specs,
 * for the schema of the rayshift plugin package (scripts/pulumi-schema/generate.ts). Where
 * `@pulumi/pulumi`'s own analyzer rejects the model's types, this maps them:
 * - a union of string literals with a type alias name is an enum type of that name;
 * - other unions are `oneOf` their members, less the members that only TypeScript can pass
 *   (construct and component classes, such as a `GatewayClass` given instead of its name);
 * - `pulumi.Input<T>` is `T`, not plain (the SDKs then take outputs there), as a property or an array item;
 * - a struct is an object type of its name; an anonymous object with an index signature (a pod
 *   spec as JSON) is `pulumi.json#/Any`.
 * Anything else fails, naming the property path, so that a new public type cannot slip out of the
 * schema unnoticed.
 */
import * as ts from 'typescript';

/** A property spec of the Pulumi package schema (the fields this generator writes). */
export interface PropertySpec {
  type?: string;
  $ref?: string;
  items?: PropertySpec;
  additionalProperties?: PropertySpec;
  oneOf?: PropertySpec[];
  plain?: boolean;
  secret?: boolean;
  description?: string;
}

/** An object or enum type of the schema. */
export interface TypeSpec {
  type: 'object' | 'string';
  description?: string;
  properties?: Record<string, PropertySpec>;
  required?: string[];
  enum?: { value: string }[];
}

/** Properties of a struct or args type, with the names of the required ones. */
export interface ObjectProperties {
  readonly properties: Record<string, PropertySpec>;
  readonly required: string[];
}

/** Collects the schema types reachable from the components' args, keyed by token. */
export class SchemaTypes {
  /** Every object and enum type met so far, by token (`rayshift:index:<Name>`). */
  readonly types: Record<string, TypeSpec> = {};

  constructor(
    private readonly checker: ts.TypeChecker,
    private readonly packageName: string,
  ) {}

  /** The spec of each property of `type` (an interface, alias or intersection), `path` naming it in errors. */
  objectProperties(type: ts.Type, path: string): ObjectProperties {
    const properties: Record<string, PropertySpec> = {};
    const required: string[] = [];
    for (const symbol of this.checker.getPropertiesOfType(type)) {
      const declaration = symbol.valueDeclaration ?? symbol.declarations?.[0];
      if (declaration === undefined) throw new Error(`${path}.${symbol.name}: no declaration`);
      const propertyType = this.checker.getTypeOfSymbolAtLocation(symbol, declaration);
      const spec = this.propertySpec(propertyType, `${path}.${symbol.name}`, this.declaredAlias(declaration));
      const description = documentation(symbol, this.checker);
      properties[symbol.name] = description ? { ...spec, description } : spec;
      if ((symbol.flags & ts.SymbolFlags.Optional) === 0) required.push(symbol.name);
    }
    return { properties, required };
  }

  /** The spec of one value of `type`; `plain` unless it is a `pulumi.Input`. */
  propertySpec(type: ts.Type, path: string, alias?: ts.Symbol): PropertySpec {
    const defined = definedMembers(type);
    const values = defined.filter((t) => !isInputWrapper(t));
    // `pulumi.Input<T>` is `T | Promise<T> | OutputInstance<T>`: T, and not plain.
    if (values.length < defined.length) return this.membersSpec(values, path, alias);
    return { ...this.membersSpec(defined, path, alias ?? type.aliasSymbol), plain: true };
  }

  private valueSpec(type: ts.Type, path: string): PropertySpec {
    return this.membersSpec(definedMembers(type), path, type.aliasSymbol);
  }

  /** The spec of the union of `defined` (a type's members other than undefined and input wrappers), named by `alias` if it has one. */
  private membersSpec(defined: ts.Type[], path: string, alias: ts.Symbol | undefined): PropertySpec {
    if (defined.length === 0) throw new Error(`${path}: only undefined`);
    if (defined.every((t) => (t.flags & ts.TypeFlags.BooleanLike) !== 0)) return { type: 'boolean' };
    if (defined.every((t) => t.isStringLiteral())) return this.enumSpec(alias, defined as ts.StringLiteralType[], path);
    const members = defined.filter((t) => !this.onlyTypeScriptCanPass(t));
    if (members.length === 0) throw new Error(`${path}: no member of ${defined.map((t) => this.checker.typeToString(t)).join(' | ')} is a value other languages can pass`);
    if (members.length > 1) {
      const oneOf = members.map((m) => this.valueSpec(m, path));
      return { oneOf: oneOf.filter((s, i) => oneOf.findIndex((o) => JSON.stringify(o) === JSON.stringify(s)) === i) };
    }
    return this.singleSpec(members[0], path);
  }

  private singleSpec(type: ts.Type, path: string): PropertySpec {
    const flags = type.flags;
    if (flags & (ts.TypeFlags.String | ts.TypeFlags.StringLiteral)) return { type: 'string' };
    if (flags & (ts.TypeFlags.Number | ts.TypeFlags.NumberLiteral)) return { type: 'number' };
    if (flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return { $ref: 'pulumi.json#/Any' };
    if (this.checker.isArrayType(type)) {
      const [element] = this.checker.getTypeArguments(type as ts.TypeReference);
      return { type: 'array', items: this.itemSpec(element, `${path}[]`) };
    }
    if (flags & ts.TypeFlags.Object) {
      const index = this.checker.getIndexInfoOfType(type, ts.IndexKind.String);
      const named = structName(type);
      if (index !== undefined && this.checker.getPropertiesOfType(type).length === 0) {
        return { type: 'object', additionalProperties: this.nested(this.valueSpec(index.type, `${path}{}`)) };
      }
      if (named === undefined) {
        if (index !== undefined) return { $ref: 'pulumi.json#/Any' };
        throw new Error(`${path}: anonymous object type ${this.checker.typeToString(type)}; name it (an interface) for the schema`);
      }
      return { $ref: this.objectType(type, named) };
    }
    throw new Error(`${path}: type ${this.checker.typeToString(type)} has no Pulumi schema mapping`);
  }

  /** An array item: plain as its container is, unless it is a `pulumi.Input` (`parents: (Gateway | Input<ParentReference>)[]`). */
  private itemSpec(type: ts.Type, path: string): PropertySpec {
    const defined = definedMembers(type);
    const values = defined.filter((t) => !isInputWrapper(t));
    return values.length < defined.length ? this.membersSpec(values, path, undefined) : this.nested(this.valueSpec(type, path));
  }

  /** Array items and map values are plain when their container is. */
  private nested(spec: PropertySpec): PropertySpec {
    return { ...spec, plain: true };
  }

  private objectType(type: ts.Type, name: string): string {
    const token = `#/types/${this.packageName}:index:${name}`;
    const key = `${this.packageName}:index:${name}`;
    if (this.types[key] !== undefined) return token;
    this.types[key] = { type: 'object' };
    const { properties, required } = this.objectProperties(type, name);
    const symbol = type.getSymbol();
    const description = symbol === undefined ? undefined : documentation(symbol, this.checker);
    this.types[key] = { type: 'object', ...(description ? { description } : {}), properties, ...(required.length > 0 ? { required } : {}) };
    return token;
  }

  private enumSpec(alias: ts.Symbol | undefined, literals: ts.StringLiteralType[], path: string): PropertySpec {
    if (alias === undefined) return { type: 'string' };
    const name = alias.name;
    const key = `${this.packageName}:index:${name}`;
    const description = documentation(alias, this.checker);
    const values = literals.map((l) => ({ value: l.value }));
    const existing = this.types[key];
    if (existing !== undefined && JSON.stringify(existing.enum) !== JSON.stringify(values)) throw new Error(`${path}: two enums named ${name}`);
    this.types[key] = { type: 'string', ...(description ? { description } : {}), enum: values };
    return { $ref: `#/types/${key}` };
  }

  /** The type alias a property declaration names (`executor?: Executor`, `x: pulumi.Input<Executor>`), if any. */
  private declaredAlias(declaration: ts.Declaration): ts.Symbol | undefined {
    let node = ts.isPropertySignature(declaration) || ts.isPropertyDeclaration(declaration) ? declaration.type : undefined;
    if (node !== undefined && ts.isTypeReferenceNode(node) && node.typeName.getText() === 'pulumi.Input' && node.typeArguments?.length === 1) node = node.typeArguments[0];
    if (node === undefined || !ts.isTypeReferenceNode(node)) return undefined;
    const symbol = this.checker.getSymbolAtLocation(node.typeName);
    if (symbol === undefined) return undefined;
    const target = symbol.flags & ts.SymbolFlags.Alias ? this.checker.getAliasedSymbol(symbol) : symbol;
    return target.flags & ts.SymbolFlags.TypeAlias ? target : undefined;
  }

  /** Classes (constructs, components, builders): only TypeScript code can hand one over. */
  private onlyTypeScriptCanPass(type: ts.Type): boolean {
    const symbol = type.getSymbol();
    return symbol !== undefined && (symbol.flags & ts.SymbolFlags.Class) !== 0;
  }
}

/** The `Promise<T>` and `OutputInstance<T>` members of a `pulumi.Input<T>`. */
function isInputWrapper(type: ts.Type): boolean {
  return ['Promise', 'OutputInstance'].includes(type.getSymbol()?.name ?? '');
}

/** The name of an interface or named type alias, undefined for anonymous object types. */
function structName(type: ts.Type): string | undefined {
  if (type.aliasSymbol !== undefined) return type.aliasSymbol.name;
  const symbol = type.getSymbol();
  if (symbol === undefined || symbol.name === '__type' || symbol.name === '__object') return undefined;
  return symbol.name;
}

/** A type's members other than undefined and null (the type itself when it is no union). */
function definedMembers(type: ts.Type): ts.Type[] {
  return type.isUnion() ? type.types.filter((t) => (t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)) === 0) : [type];
}

/** A symbol's TSDoc summary, with its `@default` as a last sentence. */
export function documentation(symbol: ts.Symbol, checker: ts.TypeChecker): string | undefined {
  const summary = ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
  const defaults = symbol.getJsDocTags(checker).filter((t) => t.name === 'default').map((t) => ts.displayPartsToString(t.text).trim());
  const text = [summary, ...defaults.map((d) => `Default: ${d}.`)].filter((s) => s.length > 0).join('\n\n');
  return text.length > 0 ? text : undefined;
}
