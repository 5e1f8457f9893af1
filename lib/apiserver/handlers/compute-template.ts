/**
 * Compute template CRUD on labelled ConfigMaps, as the caller. A ConfigMap without the template
 * label is NOT_FOUND to every RPC here, so templates can never be used to read or delete other
 * ConfigMaps; deletion is guarded by the uid and resourceVersion of the ConfigMap that was checked.
 */
import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import { create } from '@bufbuild/protobuf';
import { EmptySchema } from '@bufbuild/protobuf/wkt';
import type { KubeClient } from '../../runtime/kube/client';
import { KnownTypes, type KubeObject } from '../../runtime/kube/types';
import { dns1123SubdomainProblem } from '../../spec/names';
import { scopeOf } from '../auth/request-scope';
import { CONFIG_TYPE_LABEL, COMPUTE_TEMPLATE_TYPE, computeTemplateFromConfigMap, computeTemplateToConfigMap, isComputeTemplate } from '../convert/compute-template';
import { invalidArgument } from '../errors';
import { ListComputeTemplatesResponseSchema, type ComputeTemplateService } from '../gen/rayshift/v1/compute_template_pb';
import { authorizeVerb, kubeCall } from './kube-call';

/** Reads the template `name`; NOT_FOUND when the ConfigMap is missing or not a template. */
export async function readComputeTemplate(kube: KubeClient, namespace: string, name: string): Promise<KubeObject> {
  const subject = { kind: 'ComputeTemplate', namespace, name };
  const cm = await kubeCall(subject, () => kube.get(KnownTypes.ConfigMap, name, namespace));
  if (!isComputeTemplate(cm)) throw new ConnectError(`ComputeTemplate ${name} in namespace ${namespace} not found`, Code.NotFound);
  return cm;
}

/** The compute template handlers. */
export function computeTemplates(): ServiceImpl<typeof ComputeTemplateService> {
  return {
    async createComputeTemplate(req, ctx) {
      const scope = scopeOf(ctx);
      const { kube } = scope;
      await authorizeVerb(scope, KnownTypes.ConfigMap, 'create', req.namespace);
      const t = req.computeTemplate;
      if (!t) throw new ConnectError('compute_template is required', Code.InvalidArgument);
      const nameProblem = dns1123SubdomainProblem(t.name);
      const violations = [
        ...(nameProblem ? [{ field: 'compute_template.name', description: nameProblem }] : []),
        ...(t.cpu === 0 ? [{ field: 'compute_template.cpu', description: 'must be at least 1' }] : []),
        ...(t.memory === 0 ? [{ field: 'compute_template.memory', description: 'must be at least 1' }] : []),
        ...(t.namespace && t.namespace !== req.namespace ? [{ field: 'compute_template.namespace', description: `differs from the request's namespace ${req.namespace}` }] : []),
      ];
      if (violations.length > 0) throw invalidArgument('the compute template is invalid', violations);
      const subject = { kind: 'ComputeTemplate', namespace: req.namespace, name: t.name };
      return computeTemplateFromConfigMap(await kubeCall(subject, () => kube.create(computeTemplateToConfigMap(t, req.namespace))));
    },

    async getComputeTemplate(req, ctx) {
      return computeTemplateFromConfigMap(await readComputeTemplate(scopeOf(ctx).kube, req.namespace, req.name));
    },

    async listComputeTemplates(req, ctx) {
      const { kube } = scopeOf(ctx);
      const list = await kubeCall({ kind: 'ComputeTemplate', namespace: req.namespace }, () =>
        kube.listAll(KnownTypes.ConfigMap, { namespace: req.namespace, labelSelector: { [CONFIG_TYPE_LABEL]: COMPUTE_TEMPLATE_TYPE } }),
      );
      return create(ListComputeTemplatesResponseSchema, { computeTemplates: list.items.map(computeTemplateFromConfigMap) });
    },

    async deleteComputeTemplate(req, ctx) {
      const { kube } = scopeOf(ctx);
      const cm = await readComputeTemplate(kube, req.namespace, req.name);
      const subject = { kind: 'ComputeTemplate', namespace: req.namespace, name: req.name };
      await kubeCall(subject, () => kube.delete(KnownTypes.ConfigMap, req.name, req.namespace, { preconditions: { uid: cm.metadata.uid, resourceVersion: cm.metadata.resourceVersion } }));
      return create(EmptySchema);
    },
  };
}
