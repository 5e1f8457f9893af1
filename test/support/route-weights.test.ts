import { backendWeights, routeBackends } from './route-weights';

const route = {
  spec: {
    rules: [
      { backendRefs: [{ name: 'a', weight: 70 }, { name: 'b' }] },
      { backendRefs: [{ name: 'static', weight: 0 }, { name: 'a', weight: 70 }] },
      { matches: [{ path: { type: 'Exact', value: '/old' } }] },
    ],
  },
};

test('routeBackends: one rule\'s backends in order, an unset weight read as the Gateway API default 1', () => {
  expect(routeBackends(route)).toEqual([{ name: 'a', weight: 70 }, { name: 'b', weight: 1 }]);
  expect(routeBackends(route, 1)).toEqual([{ name: 'static', weight: 0 }, { name: 'a', weight: 70 }]);
  expect(routeBackends(route, 2)).toEqual([]);
  expect(routeBackends({})).toEqual([]);
});

test('backendWeights: every rule is read; a backend no rule lists is undefined; rules that disagree throw', () => {
  expect(backendWeights(route, ['a', 'b', 'static', 'gone'])).toEqual([70, 1, 0, undefined]);
  const split = structuredClone(route);
  split.spec.rules[1].backendRefs![1].weight = 30;
  expect(() => backendWeights(split, ['a'])).toThrow('backend a has different weights in the route\'s rules: 70, 30');
});
