import { MAX_RAY_SERVICE_NAME_LENGTH, RAY_SERVICE_DEFAULTS, RAYSHIFT_API_VERSION, UPGRADE_STRATEGY_TYPES } from '../spec/rayservice';
import { describeDefault } from './describe-default';
import { INT32_MAX, JsonObject, asArray, asObject } from '../spec/read';
import type { CelRule } from './cel-rule';
import { RAYSHIFT_PRINTER_COLUMNS, rayshiftStatusSchema } from './rayshift-status-schema';
import { ANALYSIS_CEL_RULES, analysisSchema } from './analysis-schema';

const DNS1123_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
const INCREMENTAL = 'NewClusterWithIncrementalUpgrade';

/** Guards an expression so it only applies when `self` (the `spec`) asks for an incremental upgrade. */
const SPEC_INCREMENTAL = `has(self.upgradeStrategy) && has(self.upgradeStrategy.type) && self.upgradeStrategy.type == '${INCREMENTAL}'`;
/** The same, on `spec.upgradeStrategy`, and only when options are given. */
const STRATEGY_INCREMENTAL = `has(self.type) && self.type == '${INCREMENTAL}' && has(self.clusterUpgradeOptions)`;
const OPTS = 'self.clusterUpgradeOptions';
const OPTS_AT = 'spec.upgradeStrategy.clusterUpgradeOptions';

/** CEL rules on the root (`metadata.name` is the only metadata CEL may read there). */
const ROOT_RULES: readonly CelRule[] = [
  {
    rule: `size(self.metadata.name) <= ${MAX_RAY_SERVICE_NAME_LENGTH}`,
    message: `metadata.name is too long; at most ${MAX_RAY_SERVICE_NAME_LENGTH} characters are allowed (each RayCluster is named <name>-xxxxx, which must stay within 53)`,
  },
  {
    // The API server already admits only DNS-1123 subdomains as names; a DNS-1035 label differs in
    // having no '.' and a letter first. Checked without a regex: metadata.name has no maxLength the
    // schema may declare, so a regex over it exceeds the CEL cost budget.
    rule: "!self.metadata.name.contains('.') && !['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'].exists(d, self.metadata.name.startsWith(d))",
    message: "metadata.name is not a DNS-1035 label: use lowercase letters, digits and '-', start with a letter and end with a letter or digit",
  },
];

/** CEL rules on `spec` (the rules that span several fields). */
const SPEC_RULES: readonly CelRule[] = [
  {
    rule: `!(${SPEC_INCREMENTAL}) || has(self.upgradeStrategy.clusterUpgradeOptions)`,
    message: `${OPTS_AT} are required for ${INCREMENTAL}`,
    fieldPath: '.upgradeStrategy.clusterUpgradeOptions',
    reason: 'FieldValueRequired',
  },
  {
    rule: `!(${SPEC_INCREMENTAL}) || (has(self.rayClusterConfig.enableInTreeAutoscaling) && self.rayClusterConfig.enableInTreeAutoscaling)`,
    message: `spec.rayClusterConfig.enableInTreeAutoscaling must be true: the Ray autoscaler is required for ${INCREMENTAL}`,
    fieldPath: '.rayClusterConfig.enableInTreeAutoscaling',
  },
  {
    rule:
      `!(${SPEC_INCREMENTAL}) || !has(self.upgradeStrategy.clusterUpgradeOptions) || ` +
      `(has(self.upgradeStrategy.clusterUpgradeOptions.gatewayClassName) && self.upgradeStrategy.clusterUpgradeOptions.gatewayClassName != '') || ` +
      '(has(self.rayshift) && has(self.rayshift.gatewayRef))',
    message: `${OPTS_AT}.gatewayClassName is required for ${INCREMENTAL} unless spec.rayshift.gatewayRef names an existing Gateway`,
    fieldPath: '.upgradeStrategy.clusterUpgradeOptions.gatewayClassName',
    reason: 'FieldValueRequired',
  },
];

/** CEL rules on `spec.upgradeStrategy`; the option ranges apply only to the incremental strategy, as in `lib/spec`. */
const STRATEGY_RULES: readonly CelRule[] = [
  {
    rule: `!has(self.type) || self.type in [${UPGRADE_STRATEGY_TYPES.map((t) => `'${t}'`).join(', ')}]`,
    message: `spec.upgradeStrategy.type is not a strategy; allowed: ${UPGRADE_STRATEGY_TYPES.join(', ')}`,
    fieldPath: '.type',
  },
  {
    rule: `!(${STRATEGY_INCREMENTAL}) || !has(${OPTS}.maxSurgePercent) || (${OPTS}.maxSurgePercent >= 1 && ${OPTS}.maxSurgePercent <= 100)`,
    message: `${OPTS_AT}.maxSurgePercent must be an integer from 1 to 100 (0 never adds capacity, so the upgrade would stall forever)`,
    fieldPath: '.clusterUpgradeOptions.maxSurgePercent',
  },
  {
    rule: `!(${STRATEGY_INCREMENTAL}) || !has(${OPTS}.stepSizePercent) || (${OPTS}.stepSizePercent >= 1 && ${OPTS}.stepSizePercent <= 100)`,
    message: `${OPTS_AT}.stepSizePercent must be an integer from 1 to 100 (0 never moves traffic, so the upgrade would stall forever)`,
    fieldPath: '.clusterUpgradeOptions.stepSizePercent',
  },
  {
    // Only when both are in range (the rules above report the others), as lib/spec does.
    rule:
      `!(${STRATEGY_INCREMENTAL}) || !has(${OPTS}.stepSizePercent) || ${OPTS}.stepSizePercent < 1 || ${OPTS}.stepSizePercent > 100 || ` +
      `(has(${OPTS}.maxSurgePercent) ? (${OPTS}.maxSurgePercent < 1 || ${OPTS}.maxSurgePercent > 100 || ${OPTS}.stepSizePercent <= ${OPTS}.maxSurgePercent) : true)`,
    message: `${OPTS_AT}.stepSizePercent exceeds maxSurgePercent; must be ≤ maxSurgePercent`,
    fieldPath: '.clusterUpgradeOptions.stepSizePercent',
  },
  {
    rule: `!(${STRATEGY_INCREMENTAL}) || !has(${OPTS}.intervalSeconds) || (${OPTS}.intervalSeconds >= 1 && ${OPTS}.intervalSeconds <= ${INT32_MAX})`,
    message: `${OPTS_AT}.intervalSeconds must be an integer from 1 to ${INT32_MAX} (int32)`,
    fieldPath: '.clusterUpgradeOptions.intervalSeconds',
  },
  {
    rule:
      `!(${STRATEGY_INCREMENTAL}) || !has(${OPTS}.gatewayClassName) || ${OPTS}.gatewayClassName == '' || ` +
      `(size(${OPTS}.gatewayClassName) <= 253 && ${OPTS}.gatewayClassName.matches('${DNS1123_SUBDOMAIN}'))`,
    message: `${OPTS_AT}.gatewayClassName is not a DNS-1123 subdomain: use lowercase letters, digits, '-' and '.', start and end each part with a letter or digit, at most 253 characters`,
    fieldPath: '.clusterUpgradeOptions.gatewayClassName',
  },
];

const DELAY_RULES: readonly CelRule[] = [
  {
    rule: `self >= 0 && self <= ${INT32_MAX}`,
    message: `spec.rayClusterDeletionDelaySeconds must be an integer from 0 to ${INT32_MAX} (int32)`,
  },
];

const HEAD_GROUP_RULES: readonly CelRule[] = [
  {
    rule: '!has(self.headService) || !has(self.headService.metadata) || !has(self.headService.metadata.name)',
    message: 'spec.rayClusterConfig.headGroupSpec.headService.metadata.name must not be set (KubeRay names the head Service itself)',
    fieldPath: '.headService.metadata.name',
    reason: 'FieldValueForbidden',
  },
];

const WORKER_GROUP_RULES: readonly CelRule[] = [
  {
    rule: '!has(self.minReplicas) || self.minReplicas >= 0',
    message: 'spec.rayClusterConfig.workerGroupSpecs[*].minReplicas must be an integer ≥ 0',
    fieldPath: '.minReplicas',
  },
  {
    rule: '!has(self.maxReplicas) || self.maxReplicas >= 0',
    message: 'spec.rayClusterConfig.workerGroupSpecs[*].maxReplicas must be an integer ≥ 0',
    fieldPath: '.maxReplicas',
  },
  {
    rule: '!has(self.maxReplicas) || self.maxReplicas >= (has(self.minReplicas) ? self.minReplicas : 0)',
    message: 'spec.rayClusterConfig.workerGroupSpecs[*].maxReplicas is below minReplicas; must be ≥ minReplicas',
    fieldPath: '.maxReplicas',
  },
  {
    rule: '!has(self.replicas) || self.replicas >= 0',
    message: 'spec.rayClusterConfig.workerGroupSpecs[*].replicas must be an integer ≥ 0',
    fieldPath: '.replicas',
  },
];

const GATEWAY_REF_RULES: readonly CelRule[] = [
  {
    rule: `self.name.matches('${DNS1123_SUBDOMAIN}')`,
    message: 'spec.rayshift.gatewayRef.name must name a Gateway (a DNS subdomain)',
    fieldPath: '.name',
  },
  {
    // `namespace` is a CEL reserved word: Kubernetes exposes the property as `__namespace__`.
    rule: `!has(self.__namespace__) || self.__namespace__.matches('${DNS1123_SUBDOMAIN}')`,
    message: 'spec.rayshift.gatewayRef.namespace must be a namespace name',
    fieldPath: '.namespace',
  },
];

const DEADLINE_RULES: readonly CelRule[] = [
  {
    rule: `self >= 1 && self <= ${INT32_MAX}`,
    message: `spec.rayshift.progressDeadlineSeconds must be an integer from 1 to ${INT32_MAX} (int32)`,
  },
];

const SURGE_BOUND_RULES: readonly CelRule[] = [
  {
    rule: `self >= 1 && self <= ${INT32_MAX}`,
    message: `spec.rayshift.surgeUnschedulableSeconds must be an integer from 1 to ${INT32_MAX} (int32)`,
  },
];

const ROUTE_KIND_RULES: readonly CelRule[] = [
  {
    rule: "self in ['HTTP', 'GRPC']",
    message: 'spec.rayshift.routeKind is not a route kind; allowed: HTTP, GRPC',
  },
];

const CAPACITY_POLICY_RULES: readonly CelRule[] = [
  {
    rule: "self in ['wait', 'fail', 'shrinkFirst']",
    message: 'spec.rayshift.capacityPolicy is not a capacity policy; allowed: wait, fail, shrinkFirst',
  },
];

/**
 * Every CEL rule of the rayshift CRD by the schema node it sits on (a dotted path from the root
 * schema; `[*]` is a list item). Exported for documentation and tests.
 */
export const RAYSHIFT_CEL_RULES: Readonly<Record<string, readonly CelRule[]>> = {
  '': ROOT_RULES,
  spec: SPEC_RULES,
  'spec.upgradeStrategy': STRATEGY_RULES,
  'spec.rayClusterDeletionDelaySeconds': DELAY_RULES,
  'spec.rayClusterConfig.headGroupSpec': HEAD_GROUP_RULES,
  'spec.rayClusterConfig.workerGroupSpecs[*]': WORKER_GROUP_RULES,
  'spec.rayshift.gatewayRef': GATEWAY_REF_RULES,
  'spec.rayshift.progressDeadlineSeconds': DEADLINE_RULES,
  'spec.rayshift.routeKind': ROUTE_KIND_RULES,
  'spec.rayshift.capacityPolicy': CAPACITY_POLICY_RULES,
  'spec.rayshift.surgeUnschedulableSeconds': SURGE_BOUND_RULES,
  ...ANALYSIS_CEL_RULES,
};

/**
 * JSON schema of `spec.rayshift`, the extensions rayshift adds to the RayService spec. Ranges and
 * enums are CEL rules (`RAYSHIFT_CEL_RULES`), so that every rejection carries rayshift's message;
 * an OpenAPI `enum` would also stop the CEL rules from running at all.
 */
export const RAYSHIFT_EXTENSIONS_SCHEMA: JsonObject = {
  type: 'object',
  description: 'rayshift extensions, executed by the rayshift operator.',
  properties: {
    gatewayRef: {
      type: 'object',
      description: 'Use this existing Gateway instead of creating <name>-gateway.',
      required: ['name'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 253 },
        namespace: { type: 'string', maxLength: 63 },
        sectionName: { type: 'string', maxLength: 253 },
      },
    },
    progressDeadlineSeconds: {
      type: 'integer',
      format: 'int32',
      description: describeDefault('Roll back when an upgrade makes no progress for this long, 1–2147483647.', RAY_SERVICE_DEFAULTS.progressDeadlineSeconds),
    },
    paused: { type: 'boolean', description: 'Hold the upgrade at its current step.' },
    routeKind: { type: 'string', maxLength: 8, description: describeDefault('Route to write weights to: HTTP (an HTTPRoute <name>-httproute) or GRPC (a GRPCRoute <name>-grpcroute).', RAY_SERVICE_DEFAULTS.routeKind) },
    analysis: analysisSchema(),
    capacityPolicy: {
      type: 'string',
      maxLength: 16,
      description: describeDefault('When the new cluster\'s first Pods do not fit the nodes or the ResourceQuota: wait (start it; its Pods wait for the scheduler, the reason is in status.capacity and an Event), fail (do not start it) or shrinkFirst (when they fit once the old cluster shrinks, upgrade without a surge: the old cluster gives back maxSurgePercent before the new one takes it, so the service runs below 100% during each step; otherwise as fail).', RAY_SERVICE_DEFAULTS.capacityPolicy),
    },
    surgeUnschedulableSeconds: {
      type: 'integer',
      format: 'int32',
      description: describeDefault('Report an upgrade whose new Pods stay Unschedulable this long (status.surgeUnschedulable, an Event; capacityPolicy fail then rolls it back), 1–2147483647.', RAY_SERVICE_DEFAULTS.surgeUnschedulableSeconds),
    },
  },
};

function celList(rules: readonly CelRule[]): JsonObject[] {
  return rules.map((r) => ({ ...r }));
}

/** Appends CEL rules to the schema node at `path` (dotted, `[*]` for list items) under `root`. */
function addRules(root: JsonObject, path: string, rules: readonly CelRule[]): void {
  let node = root;
  if (path !== '') {
    for (const part of path.split('.')) {
      const list = part.endsWith('[*]');
      const key = list ? part.slice(0, -3) : part;
      const next = asObject(node.properties)[key];
      if (next === undefined) throw new Error(`the RayService schema has no ${path} (missing ${key})`);
      node = list ? asObject(asObject(next).items) : asObject(next);
    }
  }
  node['x-kubernetes-validations'] = [...asArray(node['x-kubernetes-validations']), ...celList(rules)];
}

/**
 * Builds the `rayservices.rayshift.dev` CRD (version v1alpha1) from KubeRay's RayService CRD: the
 * `ray.io/v1` spec schema unchanged except that `clusterUpgradeOptions.gatewayClassName` is no
 * longer schema-required (rayshift admits `spec.rayshift.gatewayRef` instead; a CEL rule requires
 * one of the two), plus `spec.rayshift`, CEL rules for every model rule CEL can express
 * (`RAYSHIFT_CEL_RULES`, messages in `lib/spec`'s words), rayshift's structural status, the status
 * subresource and printer columns. The upstream CRD is never committed; the result for the newest
 * supported KubeRay is, by `npm run import` (`generated-crd.ts`), so that synthesis never resolves it.
 */
export function rayshiftRayServiceCrd(kubeRayRayServiceCrd: unknown): JsonObject {
  const upstream = asObject(kubeRayRayServiceCrd);
  const v1 = asArray(asObject(upstream.spec).versions).map(asObject).find((v) => v.name === 'v1');
  if (!v1) throw new Error('the KubeRay RayService CRD has no v1 version');
  const upstreamRoot = asObject(asObject(v1.schema).openAPIV3Schema);
  const spec = structuredClone(asObject(asObject(upstreamRoot.properties).spec));
  spec.properties = { ...asObject(spec.properties), rayshift: structuredClone(RAYSHIFT_EXTENSIONS_SCHEMA) };
  const options = asObject(asObject(asObject(asObject(spec.properties).upgradeStrategy).properties).clusterUpgradeOptions);
  // A Gateway class name is a DNS subdomain (≤ 253); the bound also keeps its CEL regex within the cost budget.
  const className = asObject(asObject(options.properties).gatewayClassName);
  if (className.type === 'string' && className.maxLength === undefined) className.maxLength = 253;
  if (Array.isArray(options.required)) {
    options.required = options.required.filter((f) => f !== 'gatewayClassName');
    if ((options.required as unknown[]).length === 0) delete options.required;
  }
  const root: JsonObject = {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec,
      status: rayshiftStatusSchema(asObject(asObject(upstreamRoot.properties).status)),
    },
  };
  for (const [path, rules] of Object.entries(RAYSHIFT_CEL_RULES)) addRules(root, path, rules);
  const [group, version] = RAYSHIFT_API_VERSION.split('/');
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `rayservices.${group}` },
    spec: {
      group,
      names: {
        kind: 'RayService',
        listKind: 'RayServiceList',
        plural: 'rayservices',
        singular: 'rayservice',
        shortNames: ['rsrs'],
        categories: ['rayshift'],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: RAYSHIFT_PRINTER_COLUMNS.map((c) => ({ ...c })),
          schema: { openAPIV3Schema: root },
        },
      ],
    },
  };
}
