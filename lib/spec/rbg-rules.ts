/**
 * Checks of coordination rules over a RoleBasedGroup's roles, shared by v1alpha1's inline
 * `spec.coordination`, CoordinatedPolicy `spec.policies` and the model's `coordination`.
 */
import { dns1123SubdomainProblem } from './names';
import { IntOrPercent, intOrPercentProblem, resolvePartition } from './percent';
import { ProblemList, show } from './problem';
import { JsonObject, asArray, asObject, isInteger, isObject } from './read';
import { RBG_V1ALPHA1 } from './rbg-releases';
import { partitionEffect, roleRollingUpdate } from './rbg-roles';

/** Batch modes of AffinityScheduling. */
export const BATCH_MODES = ['Sequential', 'Parallel'] as const;

/**
 * Most rounds a coordinated rolling update may take for rayshift to plan it (`plan()` keeps every
 * round, about 200 bytes each). With a maxSkew of 1% or more a rollout takes a few hundred rounds
 * whatever the replicas; at 0% every round may move a single replica.
 */
export const RBG_PLAN_MAX_ROUNDS = 100_000;

/**
 * Most batches an AffinityScheduling rule may render per role. Each batch is a role of its own, with
 * its own workload and a copy of the pod template: 500 batches of a two-role rule with a 1 KB
 * template are already about 1 MB of the RoleBasedGroup, which Kubernetes keeps under 1.5 MiB.
 */
export const MAX_AFFINITY_BATCHES = 500;

/**
 * Checks a list of rules (flattened to the model's shape) at `at`: names, roles (each in one rule,
 * known to the group when `roles` is given) and each strategy; `strategyPrefix` is the wire's
 * `strategy.` in reported paths, `percentOnly` v1alpha1's percent-only rolling-update fields.
 */
export function checkRules(
  problems: ProblemList,
  at: string,
  rulesValue: unknown,
  roles: Map<string, JsonObject> | undefined,
  percentOnly: boolean,
  strategyPrefix = '',
): void {
  if (rulesValue !== undefined && !Array.isArray(rulesValue)) {
    problems.error(at, `must be a list of coordination rules; got ${show(rulesValue)}`);
    return;
  }
  const ruleNames = new Map<string, number>();
  const owner = new Map<string, string>();
  asArray(rulesValue).forEach((r, i) => {
    const here = `${at}[${i}]`;
    if (!isObject(r)) {
      problems.error(here, `must be a rule with name and roles; got ${show(r)}`);
      return;
    }
    const name = r.name;
    if (typeof name !== 'string' || name.length === 0) problems.error(`${here}.name`, `is required; got ${show(name)}`);
    else if (ruleNames.has(name)) problems.error(`${here}.name`, `${show(name)} is already used by ${at}[${ruleNames.get(name)}]`);
    else ruleNames.set(name, i);
    const ruleRoles = r.roles;
    if (!Array.isArray(ruleRoles) || ruleRoles.length === 0) {
      problems.error(`${here}.roles`, `must list the coordinated roles; got ${show(ruleRoles)}`);
    } else if (ruleRoles.length < 2) {
      problems.warning(`${here}.roles`, `names only ${show(ruleRoles[0])}: a rule over one role coordinates nothing and upstream ignores it`);
    }
    asArray(ruleRoles).forEach((roleName, j) => {
      const rAt = `${here}.roles[${j}]`;
      if (typeof roleName !== 'string') {
        problems.error(rAt, `must be a role name; got ${show(roleName)}`);
        return;
      }
      if (roles && !roles.has(roleName)) {
        problems.error(rAt, `${show(roleName)} is not a role of this group; roles: ${[...roles.keys()].join(', ') || 'none'}`);
      }
      const ruleKey = typeof name === 'string' ? name : show(name);
      const prev = owner.get(roleName);
      if (prev !== undefined && prev !== ruleKey) {
        problems.error(rAt, `${show(roleName)} is already coordinated by rule ${show(prev)}; a role may be in one rule only`);
      } else {
        owner.set(roleName, ruleKey);
      }
    });
    const knownRoles = asArray(ruleRoles).filter((n): n is string => typeof n === 'string' && (!roles || roles.has(n)));
    if (r.rollingUpdate === undefined && r.scaling === undefined && r.affinityScheduling === undefined) {
      problems.error(here, 'sets no strategy; give rollingUpdate, scaling or affinityScheduling');
    }
    if (r.rollingUpdate !== undefined) checkRollingUpdate(problems, `${here}.${strategyPrefix}rollingUpdate`, r.rollingUpdate, knownRoles, roles, percentOnly);
    if (r.scaling !== undefined) checkScaling(problems, `${here}.${strategyPrefix}scaling`, r.scaling);
    if (r.affinityScheduling !== undefined) {
      checkAffinity(problems, `${here}.${strategyPrefix}affinityScheduling`, r.affinityScheduling, asArray(ruleRoles), roles);
    }
  });
}

function checkRollingUpdate(
  problems: ProblemList,
  at: string,
  ruValue: unknown,
  ruleRoles: string[],
  roles: Map<string, JsonObject> | undefined,
  percentOnly: boolean,
): void {
  if (!isObject(ruValue)) {
    problems.error(at, `must be a mapping; got ${show(ruValue)}`);
    return;
  }
  const ru = ruValue;
  if (ru.maxSkew !== undefined) {
    if (typeof ru.maxSkew === 'number') {
      problems.error(
        `${at}.maxSkew`,
        `must be a percent string such as "10%"; got the integer ${ru.maxSkew} (upstream RBG fails to parse it and silently treats it as 0%)`,
      );
    } else {
      const p = intOrPercentProblem(ru.maxSkew, false);
      if (p) problems.error(`${at}.maxSkew`, p);
    }
  }
  for (const field of ['maxUnavailable', 'partition'] as const) {
    if (ru[field] === undefined) continue;
    const p = intOrPercentProblem(ru[field], !percentOnly);
    if (p) problems.error(`${at}.${field}`, percentOnly && typeof ru[field] === 'number' ? `${p} (${RBG_V1ALPHA1} accepts percents only)` : p);
  }
  if (ru.maxUnavailable === 0 || ru.maxUnavailable === '0%') {
    // RBG v0.7.0/v0.8.0-alpha.5 pass the rule's value to each role's workload; a RoleInstanceSet (the
    // default workload) floors 0 to 1 when maxSurge is 0 (computeMaxUnavailable), and a coordinated role sets no maxSurge.
    problems.warning(
      `${at}.maxUnavailable`,
      `${show(ru.maxUnavailable)} does not keep every replica available: a coordinated role sets no maxSurge, and without one RBG's RoleInstanceSet (its default workload) reads 0 as 1, so each role updates one replica at a time (as \`rayshift plan\` plans it); write 1 to say what runs`,
    );
  }
  if (!roles) return;
  checkZeroSkewRounds(problems, at, ru, ruleRoles, roles, percentOnly);
  // A role named twice in a rule is still one role: its problems are reported once.
  for (const roleName of new Set(ruleRoles)) {
    const role = roles.get(roleName);
    if (!role) continue;
    const own = roleRollingUpdate(role);
    const set = (['partition', 'maxUnavailable', 'maxSurge'] as const).filter((f) => own[f] !== undefined);
    if (set.length > 0) {
      problems.error(
        `${at}`,
        `role ${show(roleName)} also sets its own rolling-update ${set.join(', ')}; a coordinated role must leave them to the coordination (KEP-30)`,
      );
    }
    const replicas = role.replicas ?? 1;
    if (ru.partition !== undefined && isInteger(replicas) && replicas > 0 && !intOrPercentProblem(ru.partition, !percentOnly)) {
      const kept = resolvePartition(ru.partition as IntOrPercent, replicas);
      if (kept >= replicas) {
        problems.error(`${at}.partition`, `${show(ru.partition)} ${partitionEffect(ru.partition, kept, replicas)} of role ${show(roleName)}; must be below replicas (${replicas})`);
      }
    }
  }
}

/**
 * What is wrong with a coordinated rollout at `maxSkewPercent` over `roles` (partition: replicas kept
 * on the old revision) for rayshift to plan it, or undefined. At 0% a round may advance one replica
 * of one role, so the rollout may take as many rounds as the rule rolls replicas (replicas −
 * partition over the roles with replicas); a rule over fewer than two such roles coordinates nothing.
 */
export function zeroSkewRolloutProblem(maxSkewPercent: number, roles: readonly { readonly replicas: number; readonly partition: number }[]): string | undefined {
  const coordinated = roles.filter((r) => r.replicas > 0);
  if (maxSkewPercent !== 0 || coordinated.length < 2) return undefined;
  const rolled = coordinated.reduce((sum, r) => sum + r.replicas - Math.min(Math.max(r.partition, 0), r.replicas), 0);
  if (rolled <= RBG_PLAN_MAX_ROUNDS) return undefined;
  return (
    `"0%" over roles that roll ${rolled} replicas (replicas − partition) may take ${rolled} rounds of one replica; ` +
    `allowed: "0%" for at most ${RBG_PLAN_MAX_ROUNDS} rolled replicas (rayshift's plan limit), or "1%" to "100%"`
  );
}

/** `zeroSkewRolloutProblem` of a rule, its roles' replicas and partitions resolved as the plan resolves them. */
function checkZeroSkewRounds(problems: ProblemList, at: string, ru: JsonObject, ruleRoles: string[], roles: Map<string, JsonObject>, percentOnly: boolean): void {
  if (ru.maxSkew !== '0%' || (ru.partition !== undefined && intOrPercentProblem(ru.partition, !percentOnly))) return;
  const counts = [...new Set(ruleRoles)].map((n) => roles.get(n)?.replicas ?? 1).filter((r): r is number => isInteger(r) && r > 0);
  const resolved = counts.map((replicas) => ({ replicas, partition: ru.partition === undefined ? 0 : resolvePartition(ru.partition as IntOrPercent, replicas) }));
  const problem = zeroSkewRolloutProblem(0, resolved);
  if (problem) problems.error(`${at}.maxSkew`, `${problem} (roles ${ruleRoles.join(', ')})`);
}

function checkScaling(problems: ProblemList, at: string, value: unknown): void {
  const s = asObject(value);
  if (s.maxSkew !== undefined) {
    const p = intOrPercentProblem(s.maxSkew, false);
    if (p) problems.error(`${at}.maxSkew`, typeof s.maxSkew === 'number' ? `${p} (upstream RBG errors on every reconcile with an integer)` : p);
  }
  if (s.progression !== undefined && s.progression !== 'OrderScheduled' && s.progression !== 'OrderReady') {
    problems.error(`${at}.progression`, `${show(s.progression)} is not a progression; allowed: OrderScheduled, OrderReady`);
  }
}

function checkAffinity(problems: ProblemList, at: string, value: unknown, ruleRoles: unknown[], roles: Map<string, JsonObject> | undefined): void {
  if (!isObject(value)) {
    problems.error(at, `must be a mapping with ratios; got ${show(value)}`);
    return;
  }
  if (value.topologyKey !== undefined) {
    const key = value.topologyKey;
    const name = typeof key === 'string' ? key.split('/').pop() ?? '' : '';
    const prefix = typeof key === 'string' && key.includes('/') ? key.slice(0, key.lastIndexOf('/')) : undefined;
    if (typeof key !== 'string' || !/^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(name) || name.length > 63 || (prefix !== undefined && dns1123SubdomainProblem(prefix))) {
      problems.error(`${at}.topologyKey`, `must be a label key such as "kubernetes.io/hostname"; got ${show(key)}`);
    }
  }
  if (value.batchMode !== undefined && !BATCH_MODES.includes(value.batchMode as (typeof BATCH_MODES)[number])) {
    problems.error(`${at}.batchMode`, `${show(value.batchMode)} is not a batch mode; allowed: ${BATCH_MODES.join(', ')}`);
  }
  const ratios = value.ratios;
  if (!isObject(ratios)) {
    problems.error(`${at}.ratios`, `must map every role of the rule to its pods per batch; got ${show(ratios)}`);
    return;
  }
  const batches = new Map<string, number>();
  for (const roleName of ruleRoles) {
    if (typeof roleName !== 'string') continue;
    const ratio = ratios[roleName];
    const rAt = `${at}.ratios.${roleName}`;
    if (!isInteger(ratio) || ratio < 1) {
      problems.error(rAt, `must be a positive integer (pods of ${show(roleName)} per batch); got ${show(ratio)}`);
      continue;
    }
    const role = roles?.get(roleName);
    if (!role) continue;
    const replicas = role.replicas ?? 1;
    if (isInteger(replicas) && replicas % ratio !== 0) {
      problems.error(rAt, `${ratio} does not divide role ${show(roleName)}'s ${replicas} replicas; every batch needs exactly ${ratio} pods`);
    } else if (isInteger(replicas)) {
      batches.set(roleName, replicas / ratio);
      if (replicas / ratio > MAX_AFFINITY_BATCHES) {
        problems.error(rAt, `${ratio} makes ${replicas / ratio} batches of role ${show(roleName)}'s ${replicas} replicas; at most ${MAX_AFFINITY_BATCHES} (each batch is a role with its own workload and template copy), so raise the ratio`);
      }
    }
  }
  for (const key of Object.keys(ratios)) {
    if (!ruleRoles.includes(key)) problems.error(`${at}.ratios.${key}`, `${show(key)} is not one of the rule's roles (${ruleRoles.map((r) => (typeof r === 'string' ? r : show(r))).join(', ')})`);
  }
  const counts = new Set(batches.values());
  if (counts.size > 1) {
    const detail = [...batches].map(([r, n]) => `${r}: ${n}`).join(', ');
    problems.warning(`${at}.ratios`, `roles make different numbers of batches (${detail}); only the smallest number is co-located, the rest is scheduled freely`);
  }
}
