/** The shape of one CEL rule of rayshift's CRDs, shared by the RayService rules and the analysis schema's. */

/** One CEL rule of the rayshift CRD (`x-kubernetes-validations` entry). */
export interface CelRule {
  /** The CEL expression; `self` is the schema node the rule sits on. */
  readonly rule: string;
  /** What is wrong, naming the field and the allowed range (the words of `lib/spec`). */
  readonly message: string;
  /** Field the error is reported at, relative to the node (e.g. `.upgradeStrategy.type`). */
  readonly fieldPath?: string;
  /** Error reason reported with the 422. */
  readonly reason?: 'FieldValueInvalid' | 'FieldValueRequired' | 'FieldValueForbidden';
}
