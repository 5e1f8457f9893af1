/**
 * A component whose props hold an output that is unknown in `pulumi preview` (a value its resource
 * only gets when it is created): the preview registers the component, neither its children nor an
 * error, as docs/pulumi.md says; known values still render in the same preview.
 */
import * as pulumi from '@pulumi/pulumi';
import { installMocks, registered } from './mocks';

installMocks(true);

import { RoleBasedGroup } from '../../lib/pulumi';

/** A resource whose `imageName` the mock provider leaves out: unknown until it is created. */
class Image extends pulumi.CustomResource {
  declare readonly imageName: pulumi.Output<string>;
  constructor(name: string) {
    super('test:index:Image', name, { imageName: undefined });
  }
}

/** Whether an output's value is known (`Output.isKnown`, internal to `@pulumi/pulumi`'s types). */
const known = (output: pulumi.Output<unknown>): Promise<boolean> => (output as unknown as { isKnown: Promise<boolean> }).isKnown;

const roles = (image: string) => ['prefill', 'decode'].map((name) => ({ name, replicas: 2, template: { spec: { containers: [{ name, image }] } } }));

test('an unknown image: the group component is previewed without children and without an error; a known one renders', async () => {
  const image = new Image('vllm');
  const pending = new RoleBasedGroup('pd', { roles: image.imageName.apply(roles) });
  const rendered = new RoleBasedGroup('known', { roles: pulumi.output(roles('vllm:1')) });
  await Promise.all([pending, rendered, image].map((r) => new Promise((resolve) => r.urn.apply(resolve))));
  await new Promise((resolve) => rendered.group.apply((g) => g.urn.apply(resolve)));
  expect(await known(image.imageName)).toBe(false);
  // The rendering waits for the image: never in this preview, so the children cannot come later.
  expect(await known(pending.groupName)).toBe(false);
  expect(await known(pending.group)).toBe(false);
  const kinds = registered.map((r) => `${r.type} ${r.name}`);
  expect(kinds).toEqual(
    expect.arrayContaining(['test:index:Image vllm', 'rayshift:index:RoleBasedGroup pd', 'rayshift:index:RoleBasedGroup known', 'kubernetes:workloads.x-k8s.io/v1alpha2:RoleBasedGroup known-rolebasedgroup']),
  );
  expect(kinds.filter((k) => k.endsWith('pd-rolebasedgroup') || k.endsWith('pd-coordinatedpolicy'))).toEqual([]);
});
