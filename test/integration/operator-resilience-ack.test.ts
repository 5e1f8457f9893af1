/**
 * The operator killed at exactly the point the crash suite's stalls were suspected at: right after
 * it wrote a traffic step to the route, before the Gateway acknowledged the route's new generation.
 * The Gateway's acknowledgement (the TEST-ONLY status writer, held by the test) then arrives at each
 * moment of the next operator's life:
 *
 * - before it starts (its first list already shows the route ready);
 * - while it starts, after its route watch delivered the acknowledgement but before all of its
 *   caches synced (the event is dropped as a startup event: the first pass must read it from the cache);
 * - after it started, while it waits on the route (the watch event must wake it).
 *
 * Each time the next operator must take the next step: none waits for its progress deadline (10 min;
 * every wait here is bounded far below it). On the test cluster with the real KubeRay (setup in
 * test/support/operator-resilience.ts); the operator runs in this process, its client wrapped so
 * that a "crash" is a thrown error after the route PATCH and a stop.
 */
import pino from 'pino';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject, ResourceType } from '../../lib/runtime/kube/types';
import type { RawWatchEvent } from '../../lib/runtime/kube/request-options';
import type { JsonPatchOp } from '../../lib/runtime/route/types';
import { templateDashboardResolver } from '../../lib/runtime/serve/resolver';
import { Operator } from '../../operator/operator';
import { HTTPROUTE, createNamespace, rayService, waitFor } from '../support/operator-env';
import { applyTestJsonPatch } from '../support/json-patch';
import { changeCpu, useResilienceSuite } from '../support/operator-resilience';
import { routeBackends } from '../support/route-weights';

const suite = useResilienceSuite();

/** The route is acknowledged for its current generation (what the Gateway status writer writes). */
function acknowledged(route: KubeObject | undefined): boolean {
  const parents = ((route?.status as { parents?: { conditions?: { observedGeneration?: number }[] }[] } | undefined)?.parents ?? []);
  return route !== undefined && parents.length > 0 && parents.every((p) => (p.conditions ?? []).length > 0 && (p.conditions ?? []).every((c) => c.observedGeneration === route.metadata.generation));
}

interface Life {
  readonly operator: Operator;
  /** Resolves with the pending weight of the first traffic step this life wrote (it then "dies" if `crashAfterStep`). */
  readonly stepped: Promise<number>;
}

interface LifeOptions {
  /** Hold the Gateway's acknowledgements, write the step, then fail the pass as a killed process would. */
  readonly crashAfterStep: boolean;
  /** Runs once, before the operator's head-Pod list is answered (that cache's sync is held until it resolves). */
  readonly beforePodList?: (route: RouteWatch) => Promise<void>;
}

/** What the operator's route watch has done so far. */
interface RouteWatch {
  /** Resolves once the route informer listed and opened its watch. */
  readonly opened: Promise<void>;
  /** The route's versions its watch delivered. */
  readonly events: KubeObject[];
}

test('killed between a traffic step and its acknowledgement, the next operator takes the next step whenever the acknowledgement arrives: before, during or after its start', async () => {
  const { env } = suite;
  const ns = 'ack';
  const name = 'grape';
  const routeName = `${name}-httproute`;
  await createNamespace(env.admin, ns);

  const live = (options: LifeOptions): Life => {
    let step!: (weight: number) => void;
    const stepped = new Promise<number>((resolve) => (step = resolve));
    let crashed = false;
    let opened!: () => void;
    const routeWatch: RouteWatch = { opened: new Promise<void>((resolve) => (opened = resolve)), events: [] };
    let podListHeld = false;
    const client = new Proxy(env.admin, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target);
        if (prop === 'patchJson') {
          return async (type: ResourceType, objectName: string, namespace: string, ops: readonly JsonPatchOp[]) => {
            if (crashed) throw new Error('this operator was killed');
            // A traffic step: the patch gives the pending backend a weight (the test's own applier says which).
            const route = type.kind === 'HTTPRoute' && objectName === routeName ? await target.get(type, objectName, namespace) : undefined;
            const pending = route && routeBackends(applyTestJsonPatch(route, ops))[1];
            const isStep = pending !== undefined && pending.weight > 0;
            if (isStep && options.crashAfterStep) env.gateway.hold();
            const patched = await target.patchJson(type, objectName, namespace, ops);
            if (isStep) {
              step(pending.weight);
              if (options.crashAfterStep) {
                crashed = true;
                throw new Error('killed right after the route PATCH');
              }
            }
            return patched;
          };
        }
        if (prop === 'listAll' && options.beforePodList) {
          return async (type: ResourceType, opts: unknown) => {
            if (type.kind === 'Pod' && !podListHeld) {
              podListHeld = true;
              await options.beforePodList!(routeWatch);
            }
            return target.listAll(type, opts as never);
          };
        }
        if (prop === 'watchStream') {
          return async (type: ResourceType, opts: unknown, onEvent: (e: RawWatchEvent) => void) => {
            const handle = await target.watchStream(type, opts as never, (e) => {
              if (type.kind === 'HTTPRoute' && e.object?.metadata?.name === routeName) routeWatch.events.push(e.object);
              onEvent(e);
            });
            if (type.kind === 'HTTPRoute') opened();
            return handle;
          };
        }
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const operator = new Operator({ client: client as KubeClient, resolver: templateDashboardResolver(env.fleet.template), log: pino({ level: 'silent' }), capacityPollMs: 50 });
    return { operator, stepped };
  };
  const routeNow = () => env.admin.tryGet(HTTPROUTE, routeName, ns);
  const operators: Operator[] = [];
  const start = async (options: LifeOptions): Promise<Life> => {
    const life = live(options);
    operators.push(life.operator);
    await life.operator.start();
    return life;
  };
  /** Waits for the life's step (bounded far below the progress deadline) and stops it. */
  const stepOf = async (life: Life, what: string): Promise<number> => {
    let weight: number | undefined;
    void life.stepped.then((w) => (weight = w));
    await waitFor(() => weight !== undefined, what, 60_000);
    await life.operator.stop();
    return weight!;
  };

  try {
    const first = await start({ crashAfterStep: false });
    await env.admin.create(rayService(ns, name, { maxSurge: 50, step: 25, interval: 1 }));
    await waitFor(async () => {
      const route = await routeNow();
      return route !== undefined && routeBackends(route).length === 1 && acknowledged(route);
    }, `${name} to serve behind an acknowledged route`);
    await first.operator.stop();

    // Life A: the first traffic step, then killed before the acknowledgement.
    const a = await start({ crashAfterStep: true });
    await changeCpu(env.admin, ns, name, '2');
    const w1 = await stepOf(a, 'the first traffic step');
    expect(acknowledged(await routeNow())).toBe(false);

    // The acknowledgement arrives while no operator runs; life B must take the next step.
    await env.gateway.release();
    await waitFor(async () => acknowledged(await routeNow()), 'the acknowledgement of the first step');
    const b = await start({ crashAfterStep: true });
    const w2 = await stepOf(b, 'the step after an acknowledgement that came before the restart');

    // The acknowledgement arrives while life C starts: its route watch delivers it before the head-Pod cache (held) syncs.
    const c = await start({
      crashAfterStep: true,
      beforePodList: async (routeWatch) => {
        // The route was listed unacknowledged and its watch is open: now the acknowledgement comes.
        await routeWatch.opened;
        await env.gateway.release();
        await waitFor(async () => acknowledged(await routeNow()), 'the acknowledgement of the second step');
        const ackVersion = Number((await routeNow())?.metadata.resourceVersion);
        await waitFor(() => routeWatch.events.some((r) => Number(r.metadata.resourceVersion) >= ackVersion && acknowledged(r)), "the new operator's route watch to deliver the acknowledgement");
      },
    });
    const w3 = await stepOf(c, 'the step after an acknowledgement that came during the restart');

    // The acknowledgement arrives once life D has started and found the route unacknowledged.
    const d = await start({ crashAfterStep: false });
    await d.operator.idle();
    expect(acknowledged(await routeNow())).toBe(false);
    await env.gateway.release();
    const w4 = await stepOf(d, 'the step after an acknowledgement that came after the restart');

    // Four distinct, rising steps: none repeated, none skipped by a lost confirmation.
    expect([w1, w2, w3, w4]).toEqual([25, 50, 75, 100]);
  } finally {
    await env.gateway.release();
    for (const o of operators) await o.stop();
  }
}, 240_000);
