/**
 * Checks of the `RayClusterSpecBuilder` props (lib/cdk8s/raycluster-builder.ts) that the RayCluster
 * spec it builds cannot show: a required prop left out or of the wrong type (as a JavaScript caller
 * can pass) is dropped or defaulted by the time the spec exists (a worker group
 * without `maxReplicas` would get the CRD's 2147483647), so it is checked on the props. What the
 * spec shows (a worker group's name, its replicas) is checked there, once.
 */
import { ProblemList, ValidationResult, show } from './problem';
import { INT32_MAX, asArray, isInteger, isObject } from './read';

/** Every problem of the builder's props, paths relative to them (`head.resources.cpu`); never throws. */
export function validateClusterBuilderProps(props: unknown): ValidationResult {
  const problems = new ProblemList();
  if (!isObject(props)) {
    problems.error('', `must be the builder's props (image, head, workerGroups, …); got ${show(props)}`);
    return problems.result();
  }
  if (typeof props.image !== 'string' || props.image.trim() === '') {
    problems.error('image', `is required: the container image of head and workers, e.g. "rayproject/ray:2.52.0-py311-gpu"; got ${show(props.image)}`);
  }
  if (!isObject(props.head)) {
    problems.error('head', `is required: the head group, a mapping with its resources; got ${show(props.head)}`);
  } else {
    checkGroup(problems, 'head', props.head);
  }
  if (props.workerGroups !== undefined && !Array.isArray(props.workerGroups)) {
    problems.error('workerGroups', `must be a list of worker groups; got ${show(props.workerGroups)}`);
  }
  asArray(props.workerGroups).forEach((g, i) => {
    const at = `workerGroups[${i}]`;
    if (!isObject(g)) {
      problems.error(at, `must be a worker group with groupName, resources and maxReplicas; got ${show(g)}`);
      return;
    }
    // A value the spec carries is checked there; a missing one the CRD would default to 2147483647.
    if (g.maxReplicas === undefined || g.maxReplicas === null) {
      problems.error(`${at}.maxReplicas`, `is required: the autoscaler's ceiling, an integer from 0 to ${INT32_MAX}; got ${show(g.maxReplicas)}`);
    }
    checkGroup(problems, at, g);
  });
  return problems.result();
}

/** A head or worker group's `resources` (required: cpu and memory) and `podSpec` (a mapping when set). */
function checkGroup(problems: ProblemList, at: string, group: Record<string, unknown>): void {
  const resources = group.resources;
  if (!isObject(resources)) {
    problems.error(`${at}.resources`, `is required: a mapping of cpu, memory and accelerators; got ${show(resources)}`);
  } else {
    for (const [field, example] of [
      ['cpu', '"4" or "500m"'],
      ['memory', '"16Gi"'],
    ] as const) {
      const v = resources[field];
      if (typeof v !== 'string' || v.trim() === '') problems.error(`${at}.resources.${field}`, `is required: a quantity string such as ${example}; got ${show(v)}`);
    }
    const accelerators = resources.accelerators;
    // The spec gets it only when above 0, as a string: anything else would be dropped or disguised there.
    if (accelerators !== undefined && (!isInteger(accelerators) || accelerators < 0)) {
      problems.error(`${at}.resources.accelerators`, `must be an integer ≥ 0 (accelerators per pod); got ${show(accelerators)}`);
    }
  }
  if (group.podSpec !== undefined && !isObject(group.podSpec)) {
    problems.error(`${at}.podSpec`, `must be a mapping of pod settings (serviceAccountName, tolerations, …); got ${show(group.podSpec)}`);
  }
}
