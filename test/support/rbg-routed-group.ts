/**
 * A routed prefill/decode RoleBasedGroup under rayshift's operator (or `pulumi up`) and the traffic through it, as
 * the router suites and bench/rbg-router-mixed.bench.ts drive it: the construct's objects for one
 * release, the live new-release weight of the rendered HTTPRoute, and a bounded client that sends
 * one request at a time per lane to the router a SIMULATED Gateway picks. Test support, not the
 * package's API.
 */
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import type { KubeClient } from '../../lib/runtime/kube/client';
import type { KubeObject } from '../../lib/runtime/kube/types';
import type { UpgradeAnalysis } from '../../lib/spec/analysis';
import type { IntOrPercent } from '../../lib/spec/percent';
import { HTTPROUTE } from '../../lib/spec/object-names';
import { backendWeights } from './route-weights';
import { generate } from './sglang-router';

/** One routed group's shape: name, namespace, replicas by role, the rule's skew and unavailability. */
export interface RoutedGroupShape {
  readonly name: string;
  readonly namespace: string;
  readonly replicas: Readonly<Record<string, number>>;
  readonly maxSkew?: string;
  readonly maxUnavailable?: IntOrPercent;
  readonly analysis?: UpgradeAnalysis;
  /** Who runs the rollout. @default 'operator' */
  readonly executor?: 'operator' | 'pulumi';
}

/**
 * Everything the construct renders for `shape` at `image` (rule `pd` with an
 * sglang router), `withRouter` false for the same group without it; and the release it makes.
 */
export function synthesizeRoutedGroup(shape: RoutedGroupShape, image: string, previousRevision?: string, withRouter = true): { objects: KubeObject[]; revision: string | undefined } {
  const chart = Testing.chart();
  const router = { kind: 'sglang' as const, image: 'sglang-router:0.3.2', gateway: { name: 'inference' }, ...(previousRevision ? { previousRevision } : {}) };
  const group = new RoleBasedGroup(chart, 'g', {
    metadata: { name: shape.name, namespace: shape.namespace },
    executor: shape.executor ?? 'operator',
    roles: Object.entries(shape.replicas).map(([role, n]) => ({ name: role, replicas: n, template: { spec: { containers: [{ name: role, image }] } } })),
    coordination: [
      {
        name: 'pd',
        roles: Object.keys(shape.replicas),
        rollingUpdate: { maxSkew: shape.maxSkew ?? '50%', maxUnavailable: shape.maxUnavailable ?? 1 },
        progressDeadlineSeconds: 180,
        ...(withRouter ? { router } : {}),
      },
    ],
    ...(shape.analysis ? { analysis: shape.analysis } : {}),
  });
  return { objects: Testing.synth(chart) as KubeObject[], revision: withRouter ? group.routerRevision('pd') : undefined };
}

/** The live new-release weight of one route, from its watch. */
export interface RouteWeightFollower {
  /** The weight the route carries now (0 before the backend appears). */
  current(): number;
  /** Each distinct weight in arrival order, with a caller's count taken when it arrived. */
  readonly weights: { weight: number; mark: number }[];
  /** Resolves once the route carries 100 for the backend. */
  readonly full: Promise<void>;
  stop(): void;
}

/** Follows backend `backend`'s weight on route `route`; `mark()` is recorded with each weight (e.g. how many workload states were seen). */
export function followRouteWeight(client: KubeClient, namespace: string, route: string, backend: string, mark: () => number = () => 0): RouteWeightFollower {
  let current = 0;
  const weights: { weight: number; mark: number }[] = [];
  let full!: () => void;
  const fullSeen = new Promise<void>((resolve) => (full = resolve));
  const watch = client.watch(HTTPROUTE, namespace, (e) => {
    if (e.object.metadata.name !== route || e.type === 'delete') return;
    const [w] = backendWeights(e.object, [backend]);
    if (typeof w !== 'number' || weights[weights.length - 1]?.weight === w) return;
    current = w;
    weights.push({ weight: w, mark: mark() });
    if (w === 100) full();
  });
  return { current: () => current, weights, full: fullSeen, stop: () => watch.stop() };
}

/** What a load run sent and got. */
export interface LoadResult {
  /** HTTP status of every request (0 when the connection failed). */
  readonly statuses: number[];
  /** Requests sent, by target label. */
  readonly sent: Record<string, number>;
  /** Requests that failed, by target label, each as `<status> at <ms since start>` (0 = no HTTP answer). */
  readonly failed: Record<string, string[]>;
}

/**
 * A bounded client: `lanes` loops, each sending one request at a time (so at most `lanes` are in
 * flight) to the URL `pick(i)` names for request i, until `stop()`, which waits for the last answers.
 */
export function startLoad(pick: (i: number) => { label: string; url: string }, lanes = 1): { stop(): Promise<LoadResult> } {
  let done = false;
  let next = 0;
  const statuses: number[] = [];
  const sent: Record<string, number> = {};
  const failed: Record<string, string[]> = {};
  const t0 = Date.now();
  const lane = async () => {
    while (!done) {
      const i = next++;
      const { label, url } = pick(i);
      sent[label] = (sent[label] ?? 0) + 1;
      const status = await generate(url, i).catch(() => 0);
      statuses.push(status);
      if (status !== 200) (failed[label] ??= []).push(`${status} at ${Date.now() - t0} ms`);
    }
  };
  const running = Promise.all(Array.from({ length: lanes }, lane));
  return {
    stop: async () => {
      done = true;
      await running;
      return { statuses, sent, failed };
    },
  };
}
