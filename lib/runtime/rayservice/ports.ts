/**
 * The ports of a RayService reconciler: the Kubernetes and Ray dashboard calls it (with its
 * observer and store) makes, and nothing more, so a pass can be driven by in-memory fakes in unit
 * tests. `KubeClient` and `ServeDashboardClient` satisfy them as they are.
 */
import type { KubeClient } from '../kube/client';
import type { ServeDashboardClient } from '../serve/client';

/** The Kubernetes calls of a reconcile pass: reads, creates, applies, patches and deletes. */
export type RayServiceKube = Pick<KubeClient, 'tryGet' | 'get' | 'list' | 'create' | 'apply' | 'applyStatus' | 'patchJson' | 'patchMerge' | 'delete'>;

/** The Ray dashboard calls of a reconcile pass: read Serve's state, PUT a Serve config. */
export type RayServiceServe = Pick<ServeDashboardClient, 'getServeDetails' | 'putServeConfig'>;
