/** The `router` option of a coordination rule (lib/spec/rbg-router.ts), through the model's validator. */
import { validateRoleBasedGroupModel, type CoordinationRule, type RoleSpec } from '../../lib/spec/rbg';
import { resolveRouter, type RouterOptions } from '../../lib/spec/rbg-router';

const template = { spec: { containers: [{ name: 'main', image: 'sglang:v1' }] } };
const roles: RoleSpec[] = [
  { name: 'prefill', replicas: 4, template },
  { name: 'decode', replicas: 2, template },
];
const router: RouterOptions = { kind: 'sglang', image: 'lmsysorg/sglang:v0.5.5', gateway: { name: 'inference' } };
const rule = (r: unknown, extra: object = { rollingUpdate: { maxSkew: '10%' } }): CoordinationRule =>
  ({ name: 'pd', roles: ['prefill', 'decode'], ...extra, router: r }) as CoordinationRule;
const findings = (r: unknown, executor: 'operator' | 'rbg' = 'operator', extra?: object) =>
  validateRoleBasedGroupModel(roles, [rule(r, extra)], false, executor).errors.map((p) => `${p.path}: ${p.message}`);

test('a router with its required fields only has no problem, and its defaults are the documented ones', () => {
  expect(findings(router)).toEqual([]);
  expect(resolveRouter(router)).toEqual({ ...router, prefill: 'prefill', decode: 'decode', port: 30000, workerPort: 30000, bootstrapPort: 8998 });
});

test('every problem at once, each naming its field, value and allowed range', () => {
  expect(findings({ kind: 'vllm', image: '', gateway: {}, prefill: 'p', decode: 'decode', port: 0, workerPort: 70000, bootstrapPort: 1.5, previousRevision: 'ABC' })).toEqual([
    'spec.coordination[0].router.kind: "vllm" is not a router kind; allowed: sglang',
    'spec.coordination[0].router.image: must name a container image with sglang_router; got ""',
    'spec.coordination[0].router.gateway.name: is required; got unset',
    'spec.coordination[0].router.prefill: "p" is not a role of this rule; allowed: "prefill", "decode"',
    'spec.coordination[0].router.port: must be a port, an integer from 1 to 65535; got 0',
    'spec.coordination[0].router.workerPort: must be a port, an integer from 1 to 65535; got 70000',
    'spec.coordination[0].router.bootstrapPort: must be a port, an integer from 1 to 65535; got 1.5',
    'spec.coordination[0].router.previousRevision: must be a router revision, 10 lowercase hex digits (the group\'s routerRevision before the change); got "ABC"',
  ]);
});

test('a default role name the rule lacks is named as the default; prefill and decode must differ', () => {
  expect(findings({ ...router, decode: 'prefill' })).toEqual(['spec.coordination[0].router.decode: "prefill" is also the prefill role; prefill and decode must be two roles']);
  const other = validateRoleBasedGroupModel(
    [...roles, { name: 'kv', replicas: 1, template }],
    [{ name: 'pd', roles: ['prefill', 'kv'], rollingUpdate: { maxSkew: '10%' }, router } as CoordinationRule],
    false,
    'operator',
  ).errors.map((p) => `${p.path}: ${p.message}`);
  expect(other).toEqual(['spec.coordination[0].router.decode: "decode" (the default) is not a role of this rule; allowed: "prefill", "kv"']);
});

test('the router needs a rolling update and a rayshift executor', () => {
  expect(findings(router, 'rbg')).toEqual([
    'spec.coordination[0].router: needs a rayshift executor: with executor "rbg" nothing moves the route\'s weights between the releases\' routers as rounds complete; allowed executors: operator, pulumi',
  ]);
  expect(findings(router, 'operator', { scaling: { maxSkew: '10%' } }).filter((f) => f.includes('.router'))).toEqual(['spec.coordination[0].router: routes the releases of a rolling update; give the rule a rollingUpdate']);
  expect(findings('sglang')).toEqual(['spec.coordination[0].router: must be a mapping with kind, image and gateway; got "sglang"']);
});

test('a routed role whose rollingUpdate.type would update its Pods in place is refused, naming the role and the type (v1alpha2); RecreatePod or unset is accepted', () => {
  const typed = (type: string): RoleSpec[] => [{ ...roles[0], rollingUpdate: { type } } as RoleSpec, roles[1]];
  const errors = (rs: RoleSpec[], v1alpha1 = false) => validateRoleBasedGroupModel(rs, [rule(router)], v1alpha1, 'operator').errors.map((p) => `${p.path}: ${p.message}`);
  expect(errors(typed('InPlaceIfPossible'))).toEqual([
    'spec.coordination[0].router.prefill: role "prefill" sets rollingUpdate.type "InPlaceIfPossible"; a routed role\'s Pods are replaced (RecreatePod), since a Pod updated in place would stay in its old release\'s router; allowed: unset or "RecreatePod"',
  ]);
  expect(errors(typed('RecreatePod'))).toEqual([]);
  expect(errors(roles)).toEqual([]);
});


test('a routed role named like an Object.prototype member ("constructor" is a DNS label) is read by its own rollingUpdate.type only', () => {
  const named: RoleSpec[] = [{ ...roles[0], name: 'constructor' }, roles[1]];
  const routed = { name: 'pd', roles: ['constructor', 'decode'], rollingUpdate: { maxSkew: '10%' }, router: { ...router, prefill: 'constructor' } } as CoordinationRule;
  expect(validateRoleBasedGroupModel(named, [routed], false, 'operator').errors).toEqual([]);
  const inPlace: RoleSpec[] = [{ ...named[0], rollingUpdate: { type: 'InPlaceIfPossible' } } as RoleSpec, roles[1]];
  expect(validateRoleBasedGroupModel(inPlace, [routed], false, 'operator').errors.map((p) => p.path)).toEqual(['spec.coordination[0].router.prefill']);
});
