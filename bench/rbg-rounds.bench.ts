/**
 * Rounds of a coordinated RoleBasedGroup rollout: rayshift's coordination (every role that can
 * advance does so each round) against upstream RBG's one-role-at-a-time step, for the same roles,
 * maxSkew and maxUnavailable, both planned by `planRoleBasedGroup` in this one run (engine level:
 * every workload catches up at once between rounds). Prints rounds, the ratio and the largest skew
 * each saw; never asserts.
 *
 *   npx tsx bench/rbg-rounds.bench.ts
 */
import { planRoleBasedGroup, type RoleBasedGroupPlan } from '../lib/engine/plan-rbg';

interface Shape {
  readonly label: string;
  readonly maxSkewPercent: number;
  readonly replicas: readonly number[];
}

const SHAPES: readonly Shape[] = [
  { label: '40p/20d at 10%', maxSkewPercent: 10, replicas: [40, 20] },
  { label: '7p/3d at 1%', maxSkewPercent: 1, replicas: [7, 3] },
  { label: '10p/2d at 10%', maxSkewPercent: 10, replicas: [10, 2] },
  { label: '1p/1d at 10%', maxSkewPercent: 10, replicas: [1, 1] },
  { label: '4p/4d at 0%', maxSkewPercent: 0, replicas: [4, 4] },
  { label: '200p/100d at 1%', maxSkewPercent: 1, replicas: [200, 100] },
  { label: '300p/100d at 5%', maxSkewPercent: 5, replicas: [300, 100] },
  { label: '7p/5d/3r at 10%', maxSkewPercent: 10, replicas: [7, 5, 3] },
  { label: '48p/16d/8r at 5%', maxSkewPercent: 5, replicas: [48, 16, 8] },
];

const NAMES = ['prefill', 'decode', 'router'];

function planOf(shape: Shape, coordination: 'parallel' | 'upstream'): RoleBasedGroupPlan {
  return planRoleBasedGroup({
    kind: 'RoleBasedGroup',
    name: 'bench',
    maxSkewPercent: shape.maxSkewPercent,
    coordination,
    roles: shape.replicas.map((replicas, i) => ({ name: NAMES[i], replicas, partition: 0, maxUnavailable: Math.max(1, Math.floor(replicas / 10)) })),
  });
}

const rows = SHAPES.map((shape) => {
  const rayshift = planOf(shape, 'parallel');
  const upstream = planOf(shape, 'upstream');
  return { shape, rayshift, upstream, ratio: rayshift.rounds.length / upstream.rounds.length };
});

const pad = (s: string, n: number) => s.padEnd(n);
console.log('rounds per rollout; ratio = rayshift rounds / upstream rounds');
console.log(`${pad('shape', 20)}${pad('rayshift', 10)}${pad('upstream', 10)}${pad('ratio', 8)}max skew seen (rayshift / upstream)`);
for (const { shape, rayshift, upstream, ratio } of rows) {
  const note = rayshift.complete && upstream.complete ? '' : '  (incomplete plan)';
  console.log(
    `${pad(shape.label, 20)}${pad(String(rayshift.rounds.length), 10)}${pad(String(upstream.rounds.length), 10)}${pad(ratio.toFixed(2), 8)}${rayshift.maxSkewPercentObserved.toFixed(1)}% / ${upstream.maxSkewPercentObserved.toFixed(1)}%${note}`,
  );
}
const total = rows.reduce((a, r) => ({ rayshift: a.rayshift + r.rayshift.rounds.length, upstream: a.upstream + r.upstream.rounds.length }), { rayshift: 0, upstream: 0 });
console.log(`all shapes: ${total.rayshift} rounds vs ${total.upstream} (ratio ${(total.rayshift / total.upstream).toFixed(2)}; rayshift needs ${((1 - total.rayshift / total.upstream) * 100).toFixed(0)}% fewer rounds)`);
