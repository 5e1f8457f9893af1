import { ApiObject, ApiObjectMetadata, Lazy } from 'cdk8s';
import { Construct, Node } from 'constructs';
import { PinnedSchemaOptions, validateAsStored } from '../spec/pinned-schemas';
import { ValidationResult, formatProblem } from '../spec/problem';

/** Group, version and kind of a Kubernetes object. */
export interface GroupVersionKind {
  /** `group/version`, or `version` for the core group. */
  readonly apiVersion: string;
  /** Object kind. */
  readonly kind: string;
}

/** The object a `ValidatedObject` synthesizes: its kind and metadata (the spec comes from `renderSpec`). */
export interface ValidatedObjectOptions extends GroupVersionKind {
  /** Object metadata. @default a name generated from the construct path */
  readonly metadata?: ApiObjectMetadata;
}

/**
 * Base of every rayshift construct: one `ApiObject` child named `Resource` (so `ApiObject.of()`
 * and escape hatches work) whose manifest is checked by the model's validator at synthesis.
 * Errors fail synthesis with every problem listed; warnings are printed to stderr, each once per synthesis.
 */
export abstract class ValidatedObject extends Construct {
  /** The underlying object; use it for JSON-patch escape hatches. */
  public readonly apiObject: ApiObject;

  protected constructor(scope: Construct, id: string, options: ValidatedObjectOptions) {
    super(scope, id);
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: options.apiVersion,
      kind: options.kind,
      metadata: options.metadata,
      spec: Lazy.any({ produce: () => this.renderSpec() }),
    });
    // cdk8s runs this hook more than once per synthesis: `app.synth()` validates the app, then again
    // in each `chart.toJson()` it calls (and `synthYaml()` likewise), 1 + charts times in all. A
    // synthesis is one synchronous run, so a warning printed is remembered until that run ends (the
    // next microtask): printed once per synthesis, and again by the next one.
    const printed = new Set<string>();
    Node.of(this).addValidation({
      validate: () => {
        const result = this.findings();
        for (const w of result.warnings) {
          const line = `warning: ${this.describe()}: ${formatProblem(w)}\n`;
          if (printed.has(line)) continue;
          if (printed.size === 0) queueMicrotask(() => printed.clear());
          printed.add(line);
          process.stderr.write(line);
        }
        return result.errors.map((e) => `${this.describe()}: ${formatProblem(e)}`);
      },
    });
  }

  /** The object's `spec`, produced at synthesis time (after every mutation of the construct). */
  protected abstract renderSpec(): any;

  /** The model's validator for the whole manifest. */
  protected abstract validateManifest(manifest: any): ValidationResult;

  /** The object's name in the cluster. */
  public get name(): string {
    return this.apiObject.name;
  }

  /** The object's kind and name, as findings name it. */
  public describe(): string {
    return `${this.apiObject.kind}/${this.apiObject.name}`;
  }

  /**
   * Every finding of the model's validator on the manifest as it would synthesize now. The spec
   * is taken from its producer directly (it is plain JSON), which spares a second cdk8s resolve;
   * JSON patches added through `ApiObject.of(...)` are escape hatches and are not validated.
   */
  public findings(): ValidationResult {
    const o = this.apiObject;
    const manifest = { apiVersion: o.apiVersion, kind: o.kind, metadata: { name: o.name, namespace: o.metadata.namespace }, spec: this.renderSpec() };
    // What the constructs take as plain objects (pod templates, rayClusterConfig overlays, route
    // filters) is checked against the pinned CRD like a YAML file, and the rules read the object
    // as the API server would store it (defaults applied).
    return validateAsStored(manifest, (stored) => this.validateManifest(stored), this.schemaOptions());
  }

  /**
   * Which pinned CRD the manifest is checked against (RoleBasedGroups name their RBG release).
   * @jsii ignore
   */
  protected schemaOptions(): PinnedSchemaOptions {
    return {};
  }
}
