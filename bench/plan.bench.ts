/**
 * Benchmark of plan(): a ≥ 10,000-step RayService timeline (maxSurge 1 %, step 1 % gives 301
 * steps per plan, so 34 plans are chained), timed against a no-op loop of the same length in the
 * same run. Prints the median of several repetitions; never asserts.
 *
 *   npx tsx bench/plan.bench.ts
 */
import { plan } from '../lib/engine';

const GOAL_MS = 10;
const REPETITIONS = 21;
const options = {
  strategy: 'NewClusterWithIncrementalUpgrade',
  maxSurgePercent: 1,
  stepSizePercent: 1,
  intervalSeconds: 1,
  rayClusterDeletionDelaySeconds: 60,
  progressDeadlineSeconds: 600,
} as const;

const stepsPerPlan = plan({ kind: 'RayService', name: 'bench', options }).steps.length;
const plans = Math.ceil(10_000 / stepsPerPlan);
const totalSteps = plans * stepsPerPlan;

function timeline(): number {
  let steps = 0;
  for (let i = 0; i < plans; i++) steps += plan({ kind: 'RayService', name: 'bench', options }).steps.length;
  return steps;
}

function noop(): number {
  let acc = 0;
  for (let i = 0; i < totalSteps; i++) acc += i & 1;
  return acc;
}

function median(f: () => number): number {
  const times: number[] = [];
  let sink = 0;
  for (let r = 0; r < REPETITIONS; r++) {
    const t0 = process.hrtime.bigint();
    sink += f();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  if (sink < 0) console.log(sink);
  times.sort((a, b) => a - b);
  return times[times.length >> 1];
}

for (let i = 0; i < 5; i++) { timeline(); noop(); } // warm up
const planMs = median(timeline);
const noopMs = median(noop);
const rbgMs = median(() => plan({ kind: 'RoleBasedGroup', name: 'bench', maxSkewPercent: 1, coordination: 'upstream', roles: [{ name: 'prefill', replicas: 2000, partition: 0, maxUnavailable: 1 }, { name: 'decode', replicas: 1000, partition: 0, maxUnavailable: 1 }] }).rounds.length);

console.log(`plan() RayService timeline: ${totalSteps} steps (${plans} plans × ${stepsPerPlan}), median of ${REPETITIONS}: ${planMs.toFixed(2)} ms (goal ≤ ${GOAL_MS} ms), ${(planMs * 1e6 / totalSteps).toFixed(0)} ns/step`);
console.log(`no-op loop of ${totalSteps} iterations: ${(noopMs * 1000).toFixed(1)} µs; ratio plan/no-op: ${(planMs / noopMs).toFixed(0)}×`);
console.log(`plan() RoleBasedGroup 2000p/1000d at 1 % (upstream, 3000 rounds): ${rbgMs.toFixed(2)} ms`);
