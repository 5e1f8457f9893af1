/** The table of `rayshift get rayservices` (and `kubectl rayshift get rayservices`): the split columns of each row. */
import type { RayServiceStatus } from '../../lib/engine/status';
import { rayServiceHeader, rayServiceRow, renderTable } from '../../lib/cli/get-command';
import { serviceView } from '../../lib/cli/status-view';
import { T, engine } from './engine-state-fixture';

function view(name: string, e: RayServiceStatus | undefined, interval = 90) {
  return serviceView({
    metadata: { namespace: 'serving', name },
    spec: { upgradeStrategy: { clusterUpgradeOptions: { intervalSeconds: interval } } },
    status: e ? { engineState: e } : undefined,
  });
}

test('an upgrade in flight shows both weights, both capacities and the countdown to the next traffic step', () => {
  expect(rayServiceRow(view('llm', engine()), T + 4_500, false)).toEqual(['llm', 'Upgrading/Migrating', 'llm-aaaaa', 'llm-bbbbb', '70/30', '100/50', 'traffic step in 1m26s']);
  expect(rayServiceRow(view('llm', engine()), T + 90_000, false)[6]).toBe('traffic step due');
});

test('a step that waits for something else than the clock shows what it waits for; no upgrade shows no pending side', () => {
  expect(rayServiceRow(view('llm', engine({ phase: 'Paused', reason: 'Paused' })), T, false).slice(5)).toEqual(['100/50', 'Paused']);
  expect(rayServiceRow(view('llm', engine({ reason: 'WaitingForCapacity', pendingWeight: 0, trafficConfirmed: false, lastProgressTime: undefined })), T, false)[6]).toBe('WaitingForCapacity');
  const running = engine({ phase: 'Running', reason: 'UpToDate', pendingClusterName: undefined, activeWeight: 100, pendingWeight: 0, pendingTargetCapacity: 0 });
  expect(rayServiceRow(view('llm', running), T, false)).toEqual(['llm', 'Running/UpToDate', 'llm-aaaaa', '-', '100/-', '100/-', '-']);
  expect(rayServiceRow(view('new', undefined), T, false)).toEqual(['new', '-', '-', '-', '-', '-', '-']);
});

test('with all namespaces the namespace leads; columns line up as kubectl prints them', () => {
  const rows = [rayServiceHeader(true), rayServiceRow(view('llm', engine()), T, true), rayServiceRow(view('chat-bot', undefined), T, true)];
  expect(renderTable(rows).split('\n')).toEqual([
    'NAMESPACE   NAME       PHASE/REASON          ACTIVE      PENDING     WEIGHTS   CAPACITIES   NEXT STEP',
    'serving     llm        Upgrading/Migrating   llm-aaaaa   llm-bbbbb   70/30     100/50       traffic step in 1m30s',
    'serving     chat-bot   -                     -           -           -         -            -',
  ]);
});
