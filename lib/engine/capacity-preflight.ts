/**
 * The capacity preflight: will the Pods an upgrade is about to create be schedulable? It places
 * them Pod by Pod on the nodes that match their node selector, required node affinity and
 * tolerations (a Pod is placed on one node, never on a sum), against what those nodes have left
 * (allocatable minus the requests of the Pods bound to them) and the namespace's ResourceQuotas.
 * The outcome is `fits`, `fitsAfterOldShrinks` (only once the old cluster's releasable Pods are
 * gone) or `doesNotFit`, with a message naming the resource, the need and what is free now.
 *
 * Placement is first-fit over the nodes in name order, largest Pod first, as a scheduler filling
 * the cluster would; it can say "does not fit" for a set an exhaustive packing would fit, never
 * "fits" for one that does not. Pure: the executor reads the cluster, the engine decides.
 */
import { showQuantity } from '../spec/quantity';

/** Resource amounts by resource name, in milli-units (`parseQuantityMilli`); `pods` counts 1000 per Pod. */
export type ResourceAmounts = Readonly<Record<string, number>>;

/** One `spec.tolerations[]` entry. */
export interface PodToleration {
  readonly key?: string;
  /** @default "Equal" */
  readonly operator?: string;
  readonly value?: string;
  /** Empty: every effect. */
  readonly effect?: string;
}

/** One requirement of a node selector term (`matchExpressions[]` / `matchFields[]`). */
export interface NodeRequirement {
  readonly key: string;
  /** In, NotIn, Exists, DoesNotExist, Gt, Lt. */
  readonly operator: string;
  readonly values?: readonly string[];
}

/** One term of `requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms` (its requirements all hold). */
export interface NodeTerm {
  readonly matchExpressions?: readonly NodeRequirement[];
  /** Only `metadata.name` is a field Kubernetes matches on. */
  readonly matchFields?: readonly NodeRequirement[];
}

/** Where a Pod may go. */
export interface PodPlacement {
  readonly nodeSelector?: Readonly<Record<string, string>>;
  /** Required node affinity: a node must match one term. @default any node */
  readonly requiredTerms?: readonly NodeTerm[];
  readonly tolerations?: readonly PodToleration[];
}

/** Identical Pods the upgrade will create: a worker group's (or the head's, or an RBG role's). */
export interface PodGroupDemand {
  /** Shown in messages: `head`, a worker group's or role's name. */
  readonly name: string;
  readonly pods: number;
  /** Requests of one Pod (LimitRange defaults applied), with `pods: 1000`. */
  readonly requests: ResourceAmounts;
  readonly placement: PodPlacement;
}

/** One node as the scheduler filters it. */
export interface CapacityNode {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly { readonly key: string; readonly value?: string; readonly effect: string }[];
  readonly allocatable: ResourceAmounts;
  /** `spec.unschedulable` (cordoned). */
  readonly unschedulable?: boolean;
}

/** A Pod bound to a node (not finished), holding its requests there. */
export interface BoundPod {
  readonly node: string;
  readonly requests: ResourceAmounts;
  /** Belongs to the old cluster and is given back when it shrinks. */
  readonly releasable?: boolean;
}

/** One ResourceQuota of the namespace: `spec.hard` and `status.used`, keyed as Kubernetes keys them. */
export interface QuotaUsage {
  readonly name: string;
  readonly hard: ResourceAmounts;
  readonly used: ResourceAmounts;
}

/** What the cluster has, as the executor read it. */
export interface CapacityPicture {
  readonly nodes: readonly CapacityNode[];
  readonly pods: readonly BoundPod[];
  readonly quotas: readonly QuotaUsage[];
}

/** The preflight's outcome. */
export type CapacityOutcome = 'fits' | 'fitsAfterOldShrinks' | 'doesNotFit';

/** The outcome and, unless it fits now, why not. */
export interface CapacityVerdict {
  readonly outcome: CapacityOutcome;
  /** What does not fit now (absent when it fits). */
  readonly message?: string;
}

/**
 * The executor could not list what the preflight reads (a kubeconfig without `list` on nodes, the
 * API server restarting): nothing is known of the fit, and the capacity policy decides
 * (capacity-policy.ts). `unread` is the failure as the API answered it.
 */
export interface CapacityUnread {
  readonly unread: string;
}

/** Whether the executor could not read the cluster for a preflight. */
export function isUnread<T extends object>(reading: T | CapacityUnread): reading is CapacityUnread {
  return 'unread' in reading;
}

/** What a status records of a preflight: its outcome, or `unknown` when the cluster could not be read. */
export type CapacityRecordOutcome = CapacityOutcome | 'unknown';

/** Taint effects that keep a Pod without a matching toleration off the node. */
const BLOCKING_EFFECTS = new Set(['NoSchedule', 'NoExecute']);

/** Decides whether `demand` fits `picture` now, only after the old cluster's releasable Pods are gone, or not at all. */
export function capacityPreflight(demand: readonly PodGroupDemand[], picture: CapacityPicture): CapacityVerdict {
  const now = placeAll(demand, picture.nodes, picture.pods) ?? quotaShortfall(demand, picture.quotas, picture.pods, false);
  if (now === undefined) return { outcome: 'fits' };
  const kept = picture.pods.filter((p) => p.releasable !== true);
  if (kept.length === picture.pods.length) return { outcome: 'doesNotFit', message: now };
  const later = placeAll(demand, picture.nodes, kept) ?? quotaShortfall(demand, picture.quotas, picture.pods, true);
  return { outcome: later === undefined ? 'fitsAfterOldShrinks' : 'doesNotFit', message: now };
}

/** Places every Pod; returns why one cannot be placed, or undefined when all are. */
function placeAll(demand: readonly PodGroupDemand[], nodes: readonly CapacityNode[], bound: readonly BoundPod[]): string | undefined {
  const sorted = [...nodes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const free = new Map(sorted.map((n) => [n.name, { ...n.allocatable } as Record<string, number>]));
  for (const p of bound) {
    const left = free.get(p.node);
    if (left === undefined) continue;
    for (const [r, v] of Object.entries(p.requests)) left[r] = (left[r] ?? 0) - v;
  }
  const groups = [...demand].filter((g) => g.pods > 0).sort((a, b) => size(b.requests) - size(a.requests));
  for (const g of groups) {
    const matching = sorted.filter((n) => nodeAdmits(n, g.placement));
    const before = matching.map((n) => ({ node: n, left: { ...free.get(n.name)! } }));
    for (let i = 0; i < g.pods; i++) {
      const target = matching.find((n) => fitsOn(g.requests, free.get(n.name)!));
      if (target === undefined) return shortfall(g, before);
      const left = free.get(target.name)!;
      for (const [r, v] of Object.entries(g.requests)) left[r] = (left[r] ?? 0) - v;
    }
  }
  return undefined;
}

/** A rough size to place large Pods first: the sum of their requests scaled per resource kind (accelerators weigh most). */
function size(requests: ResourceAmounts): number {
  let total = 0;
  for (const [r, v] of Object.entries(requests)) total += r.includes('/') ? v * 1e6 : r === 'cpu' ? v : r === 'pods' ? 0 : v / 2 ** 30;
  return total;
}

function fitsOn(requests: ResourceAmounts, left: Readonly<Record<string, number>>): boolean {
  for (const [r, v] of Object.entries(requests)) if (v > 0 && v > (left[r] ?? 0)) return false;
  return true;
}

/** Why group `g` does not fit on the nodes that admit it (as they were before it was placed). */
function shortfall(g: PodGroupDemand, before: readonly { node: CapacityNode; left: Record<string, number> }[]): string {
  const where = `nodes matching ${describePlacement(g.placement)}`;
  if (before.length === 0) return `${g.name}: no node matches ${describePlacement(g.placement)} (its node selector, required node affinity and tolerations)`;
  const resources = Object.keys(g.requests).filter((r) => g.requests[r] > 0).sort(byScarcity);
  for (const r of resources) {
    const largest = Math.max(...before.map((b) => b.node.allocatable[r] ?? 0));
    if (g.requests[r] > largest) {
      return `${g.name}: a Pod needs ${showQuantity(r, g.requests[r])} ${r}, more than any of the ${where} has (largest: ${showQuantity(r, largest)} allocatable)`;
    }
  }
  for (const r of resources) {
    const need = g.requests[r] * g.pods;
    const freeSum = before.reduce((a, b) => a + Math.max(0, b.left[r] ?? 0), 0);
    if (need > freeSum) return `${g.name}: needs ${showQuantity(r, need)} ${r} on ${where}, ${showQuantity(r, freeSum)} free`;
  }
  const per = resources.map((r) => `${showQuantity(r, g.requests[r])} ${r}`).join(', ');
  return `${g.name}: needs ${g.pods} Pod${g.pods === 1 ? '' : 's'} of ${per} on ${where}; the free capacity is split over nodes none of which holds one more Pod`;
}

/** Extended resources (accelerators) first, then cpu, memory, the rest, and pods last: the resource a person looks for first. */
function byScarcity(a: string, b: string): number {
  const rank = (r: string) => (r.includes('/') ? 0 : r === 'cpu' ? 1 : r === 'memory' ? 2 : r === 'pods' ? 4 : 3);
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** `{gpu=a100, zone in (a,b)}`, or `{}` for any node. */
export function describePlacement(p: PodPlacement): string {
  const parts = Object.entries(p.nodeSelector ?? {}).map(([k, v]) => `${k}=${v}`);
  const terms = (p.requiredTerms ?? []).map((t) => [...(t.matchExpressions ?? []), ...(t.matchFields ?? [])].map(describeRequirement).join(', '));
  if (terms.length === 1) parts.push(terms[0]);
  else if (terms.length > 1) parts.push(terms.map((t) => `(${t})`).join(' or '));
  return `{${parts.join(', ')}}`;
}

function describeRequirement(r: NodeRequirement): string {
  switch (r.operator) {
    case 'Exists': return r.key;
    case 'DoesNotExist': return `!${r.key}`;
    case 'Gt': return `${r.key}>${r.values?.[0] ?? ''}`;
    case 'Lt': return `${r.key}<${r.values?.[0] ?? ''}`;
    default: return `${r.key} ${r.operator === 'NotIn' ? 'notin' : 'in'} (${(r.values ?? []).join(',')})`;
  }
}

/** The scheduler's node filters rayshift applies: cordon, taints, node selector, required node affinity. */
export function nodeAdmits(node: CapacityNode, p: PodPlacement): boolean {
  if (node.unschedulable === true && !tolerates(p.tolerations, { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' })) return false;
  for (const t of node.taints) if (BLOCKING_EFFECTS.has(t.effect) && !tolerates(p.tolerations, t)) return false;
  for (const [k, v] of Object.entries(p.nodeSelector ?? {})) if (node.labels[k] !== v) return false;
  const terms = p.requiredTerms ?? [];
  return terms.length === 0 || terms.some((t) => termMatches(node, t));
}

function tolerates(tolerations: readonly PodToleration[] | undefined, taint: { readonly key: string; readonly value?: string; readonly effect: string }): boolean {
  return (tolerations ?? []).some((t) => {
    if (t.effect !== undefined && t.effect !== '' && t.effect !== taint.effect) return false;
    if (t.operator === 'Exists') return t.key === undefined || t.key === '' || t.key === taint.key;
    return t.key === taint.key && (t.value ?? '') === (taint.value ?? '');
  });
}

/** A term with no requirement matches no node, as in Kubernetes. */
function termMatches(node: CapacityNode, t: NodeTerm): boolean {
  const exprs = t.matchExpressions ?? [];
  const fields = t.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  return exprs.every((r) => requirementHolds(node.labels[r.key], r)) && fields.every((r) => r.key === 'metadata.name' && requirementHolds(node.name, r));
}

function requirementHolds(value: string | undefined, r: NodeRequirement): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In': return value !== undefined && values.includes(value);
    case 'NotIn': return value === undefined || !values.includes(value);
    case 'Exists': return value !== undefined;
    case 'DoesNotExist': return value === undefined;
    case 'Gt': return value !== undefined && /^-?\d+$/.test(value) && Number(value) > Number(values[0]);
    case 'Lt': return value !== undefined && /^-?\d+$/.test(value) && Number(value) < Number(values[0]);
    default: return false;
  }
}

/**
 * The first quota the demand would exceed, as a message, or undefined. A quota key counts the
 * requests it names (`requests.nvidia.com/gpu`, `requests.cpu` or `cpu`, `pods`); `limits.*` and
 * object counts are not requested by scheduling Pods and are left to the API server.
 * `afterShrink` subtracts the releasable Pods from `used`.
 */
function quotaShortfall(demand: readonly PodGroupDemand[], quotas: readonly QuotaUsage[], pods: readonly BoundPod[], afterShrink: boolean): string | undefined {
  const released = afterShrink ? pods.filter((p) => p.releasable === true) : [];
  for (const q of quotas) {
    for (const [key, hard] of Object.entries(q.hard)) {
      const resource = quotaResource(key);
      if (resource === undefined) continue;
      const need = demand.reduce((a, g) => a + (g.requests[resource] ?? 0) * g.pods, 0);
      if (need === 0) continue;
      const freed = released.reduce((a, p) => a + (p.requests[resource] ?? 0), 0);
      const used = Math.max(0, (q.used[key] ?? 0) - freed);
      if (used + need > hard) {
        return `needs ${showQuantity(resource, need)} ${key} in ResourceQuota ${q.name}, ${showQuantity(resource, Math.max(0, hard - used))} free (hard ${showQuantity(resource, hard)}, used ${showQuantity(resource, used)})`;
      }
    }
  }
  return undefined;
}

/** The Pod request a quota key limits; undefined for keys Pods' scheduling does not consume. */
function quotaResource(key: string): string | undefined {
  if (key.startsWith('requests.')) return key.slice('requests.'.length);
  if (key === 'cpu' || key === 'memory' || key === 'ephemeral-storage' || key === 'pods') return key;
  return undefined;
}
