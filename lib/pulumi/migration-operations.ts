/**
 * The operations of the Pulumi executor's dynamic provider, loaded by path inside its methods (see
 * `provider-module.ts`): create and update write the spec into the service's record and drive the
 * migration to completion; diff tells upgrades from in-place changes; read refreshes from the
 * record; delete tears down.
 */
import type * as pulumi from '@pulumi/pulumi';
import { classifySpecChange } from '../engine/driver-rules';
import { RayServiceStatus } from '../engine/status';
import { PAUSE_ANNOTATION } from '../engine/steering';
import { RayServiceSpec } from '../spec/rayservice';
import { connectionOf, connectServe, inputsChanged, resourceId, withKubeClient } from './connection';
import { driveMigration } from './migration-drive';
import { MigrationInputs, MigrationOutputs, REPLACING_INPUTS } from './migration-inputs';
import { recordName } from './record-name';
import { readRecord, serviceOfRecord, setRecordAnnotation, writeRecordSpec } from './service-record';
import type { ProviderSettings } from './provider-module';
import { tearDown } from './teardown';

function outputsOf(inputs: MigrationInputs, status: RayServiceStatus | undefined, steps: number): MigrationOutputs {
  const { kubeconfig: _secret, ...shape } = inputs;
  return {
    ...shape,
    recordName: recordName(inputs.name),
    ...(status?.activeClusterName !== undefined ? { activeClusterName: status.activeClusterName } : {}),
    activeWeight: status?.activeWeight ?? 0,
    activeTargetCapacity: status?.activeTargetCapacity ?? 0,
    phase: status?.phase ?? 'Initializing',
    reason: status?.reason ?? 'CreatingCluster',
    stepsLastRun: steps,
  };
}

/** Writes the spec into the record, lifts a hold left by an earlier run's deadline and drives the migration. */
async function run(config: ProviderSettings, inputs: MigrationInputs): Promise<MigrationOutputs> {
  const settings = connectionOf(config, inputs);
  return withKubeClient(settings, async (client) => {
    await writeRecordSpec(client, inputs.namespace, inputs.name, inputs.spec, inputs.labels);
    await setRecordAnnotation(client, inputs.namespace, inputs.name, PAUSE_ANNOTATION, undefined);
    const { status, steps } = await driveMigration(client, connectServe(settings), inputs.namespace, inputs.name, {
      deadlineAt: Date.now() + inputs.deadlineSeconds * 1000,
      onDeadline: inputs.onDeadline,
      capacityPollMs: inputs.capacityPollMs,
      log: (line) => console.log(line),
    });
    return outputsOf(inputs, status, steps);
  });
}

/** An error that keeps a created-but-unfinished service in Pulumi's state (`ErrorResourceInitFailed`), so destroy can reach it. */
class UnfinishedCreation extends Error {
  constructor(
    message: string,
    readonly id: string,
    readonly properties: Record<string, unknown>,
    readonly reasons: string[],
  ) {
    super(message);
  }
}

/** `create`: the first RayCluster, Serve config, Services, Gateway and route, driven until the service serves. */
export async function create(config: ProviderSettings, inputs: MigrationInputs & { __provider?: string }): Promise<pulumi.dynamic.CreateResult<MigrationOutputs>> {
  const id = resourceId(inputs);
  try {
    return { id, outs: await run(config, inputs) };
  } catch (err) {
    const message = (err as Error).message;
    throw new UnfinishedCreation(message, id, { ...outputsOf(inputs, undefined, 0), __provider: inputs.__provider }, [message]);
  }
}

/** `update`: the new spec into the record, then the upgrade (or an in-place Serve config change) to completion. */
export async function update(config: ProviderSettings, news: MigrationInputs): Promise<pulumi.dynamic.UpdateResult<MigrationOutputs>> {
  return { outs: await run(config, news) };
}

/** Input properties compared by `diff`; the kubeconfig is a connection detail, not part of the service. */
const COMPARED: readonly (keyof MigrationInputs)[] = ['name', 'namespace', 'spec', 'labels', 'context', 'dashboardAddressTemplate', 'deadlineSeconds', 'onDeadline', 'capacityPollMs'];

/** What a spec change does, in words, for the diff line. */
export function describeChange(olds: RayServiceSpec, news: RayServiceSpec): string | undefined {
  const change = classifySpecChange(olds, news);
  switch (change.kind) {
    case 'upgrade':
      return `cluster spec changed: ${change.strategy} upgrade to a new RayCluster`;
    case 'inPlace':
      return 'Serve config changed: applied in place to the serving cluster';
    case 'settings':
      return 'upgrade settings changed: recorded for the next upgrade';
    case 'none':
      return undefined;
  }
}

/** `diff`: name or namespace changes replace; any other change updates (printing whether it upgrades or applies in place). */
export function diff(olds: MigrationOutputs, news: MigrationInputs): pulumi.dynamic.DiffResult {
  if (!inputsChanged(olds, news, COMPARED)) return { changes: false };
  const replaces = REPLACING_INPUTS.filter((k) => inputsChanged(olds, news, [k]));
  const what = olds.spec !== undefined ? describeChange(olds.spec, news.spec) : undefined;
  if (what) console.log(`${news.name}: ${what}`);
  return { changes: true, ...(replaces.length > 0 ? { replaces: [...replaces] } : {}) };
}

/** `read` (refresh): the record's spec and status, or gone when the record is. */
export async function read(config: ProviderSettings, id: string, props: MigrationOutputs): Promise<pulumi.dynamic.ReadResult<MigrationOutputs>> {
  return withKubeClient(connectionOf(config, props), async (client) => {
    const record = await readRecord(client, props.namespace, props.name);
    if (!record) return { id: '', props: {} as MigrationOutputs };
    const svc = serviceOfRecord(record, props.name);
    const engine = (svc.status as { engineState?: RayServiceStatus }).engineState;
    const inputs = { ...props, spec: svc.spec as RayServiceSpec, kubeconfig: undefined };
    return { id, props: { ...outputsOf(inputs, engine, props.stepsLastRun ?? 0) } };
  });
}

/** `delete`: traffic off, then everything the record owns, then the record. */
async function deleteService(config: ProviderSettings, props: MigrationOutputs): Promise<void> {
  await withKubeClient(connectionOf(config, props), async (client) => {
    const deleted = await tearDown(client, props.namespace, props.name);
    console.log(`${props.name}: deleted ${deleted.join(', ') || 'nothing (already gone)'}`);
  });
}

/** `delete` is a reserved word, so the function is exported under that name here. */
export { deleteService as delete };
