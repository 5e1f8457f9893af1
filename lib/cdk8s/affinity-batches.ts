import { CoordinationRule, RoleSpec } from '../spec/rbg';
import { MAX_AFFINITY_BATCHES } from '../spec/rbg-rules';
import { asObject } from '../spec/read';

/** Label every pod of a rayshift-rendered RoleBasedGroup carries: the group's name. */
export const GROUP_LABEL = 'rayshift.dev/group';
/** Label carrying the original role name of a batch role. */
export const ROLE_LABEL = 'rayshift.dev/role';
/** Prefix of the per-coordination batch label: `affinity.rayshift.dev/<rule>: b<k>`. */
export const BATCH_LABEL_PREFIX = 'affinity.rayshift.dev/';
/** Default topology domain of a batch. */
export const DEFAULT_TOPOLOGY_KEY = 'kubernetes.io/hostname';

/** The roles and coordination rules of a group as synthesized, with AffinityScheduling batches rendered. */
export interface RenderedGroup {
  /** The roles, split roles replaced by their batch roles. */
  readonly roles: RoleSpec[];
  /** The rules, references to split roles expanded to their batch roles. */
  readonly rules: CoordinationRule[];
}

/**
 * Renders AffinityScheduling rules into roles the RBG controller can schedule: each coordinated
 * role becomes one role per batch (`<role>-b<k>` with `ratio` replicas), whose pods carry the
 * label `affinity.rayshift.dev/<rule>: b<k>` and a required pod affinity on exactly that label
 * (and the group), so each batch's pods of every role share one topology domain. Replicas beyond
 * the common number of batches go to `<role>-rest` without affinity. Sequential batch mode makes
 * batch k depend on batch k−1; references to a split role are expanded to its batch roles.
 * Rolling-update rules over split roles are expanded the same way. Roles outside every
 * AffinityScheduling rule are returned unchanged.
 */
export function renderAffinityBatches(group: string, roles: readonly RoleSpec[], rules: readonly CoordinationRule[]): RenderedGroup {
  const split = new Map<string, string[]>();
  const rendered = new Map<string, RoleSpec[]>();
  for (const rule of rules) {
    const affinity = rule.affinityScheduling;
    if (!affinity) continue;
    const members = rule.roles.map((name) => roles.find((r) => r.name === name)).filter((r): r is RoleSpec => r !== undefined);
    const smallest = Math.max(0, Math.min(...members.map((r) => Math.floor((r.replicas ?? 1) / (affinity.ratios[r.name] ?? 1)))));
    // Ratios of 0 (or not numbers) and too many batches are reported by validation; they must not
    // make the loop below endless or exhaust memory before validation runs.
    const batches = Number.isFinite(smallest) ? Math.min(smallest, MAX_AFFINITY_BATCHES + 1) : 0;
    const key = `${BATCH_LABEL_PREFIX}${rule.name}`;
    for (const role of members) {
      const ratio = affinity.ratios[role.name] ?? 1;
      const out: RoleSpec[] = [];
      for (let k = 0; k < batches; k++) {
        const previous = affinity.batchMode === 'Parallel' || k === 0 ? [] : members.map((m) => `${m.name}-b${k - 1}`);
        out.push(batchRole(group, role, `${role.name}-b${k}`, ratio, previous, { key, value: `b${k}`, topologyKey: affinity.topologyKey }));
      }
      const rest = (role.replicas ?? 1) - batches * ratio;
      if (rest > 0) out.push(batchRole(group, role, `${role.name}-rest`, rest, [], undefined));
      rendered.set(role.name, out);
      split.set(role.name, out.map((r) => r.name));
    }
  }
  const expand = (names: readonly string[]) => names.flatMap((n) => split.get(n) ?? [n]);
  const outRoles = roles.flatMap((r) =>
    (rendered.get(r.name) ?? [r]).map((x) => (Array.isArray(x.dependencies) ? { ...x, dependencies: unique(expand(x.dependencies)) } : x)),
  );
  const outRules = rules
    .filter((r) => r.rollingUpdate !== undefined || r.scaling !== undefined)
    .map((r) => ({
      name: r.name,
      roles: expand(r.roles),
      ...(r.rollingUpdate ? { rollingUpdate: r.rollingUpdate } : {}),
      ...(r.scaling ? { scaling: r.scaling } : {}),
    }));
  return { roles: outRoles, rules: outRules };
}

function unique(names: string[]): string[] {
  return [...new Set(names)];
}

function batchRole(
  group: string,
  role: RoleSpec,
  name: string,
  replicas: number,
  after: string[],
  batch: { key: string; value: string; topologyKey?: string } | undefined,
): RoleSpec {
  // A role without a template (a JavaScript caller) is reported by validation; its batch roles carry only the labels and affinity.
  const template = asObject(role.template);
  const labels = { ...asObject(asObject(template.metadata).labels), [GROUP_LABEL]: group, [ROLE_LABEL]: role.name, ...(batch ? { [batch.key]: batch.value } : {}) };
  const spec = batch
    ? {
        ...asObject(template.spec),
        affinity: {
          ...asObject(asObject(template.spec).affinity),
          podAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              {
                labelSelector: { matchLabels: { [GROUP_LABEL]: group, [batch.key]: batch.value } },
                topologyKey: batch.topologyKey ?? DEFAULT_TOPOLOGY_KEY,
              },
            ],
          },
        },
      }
    : template.spec;
  const dependencies = [...(Array.isArray(role.dependencies) ? role.dependencies : []), ...after];
  return {
    ...role,
    name,
    replicas,
    ...(dependencies.length > 0 ? { dependencies } : {}),
    template: { ...template, metadata: { ...asObject(template.metadata), labels }, spec } as RoleSpec['template'],
  };
}
