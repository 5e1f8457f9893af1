/** What the operator's and the API server's Deployments share: the image, and a Deployment run as its own ServiceAccount. */
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';

/** The image of the operator and the API server (their `image` default). */
export const RAYSHIFT_IMAGE = 'ghcr.io/rayshift/rayshift:0.1.0';

/** A rayshift component's Deployment. */
export interface ComponentDeploymentProps {
  /** Name of the Deployment and of the ServiceAccount its pods run as; pods are selected by `app.kubernetes.io/name` = this. */
  readonly name: string;
  /** Namespace. */
  readonly namespace: string;
  /** Labels of the Deployment and its pods (with `app.kubernetes.io/name` = `name`). */
  readonly labels: Readonly<Record<string, string>>;
  /** Replicas. */
  readonly replicas: number;
}

/** The construct `Deployment` of `scope`: a Deployment of `pod` (all of its spec but the ServiceAccount) run as the ServiceAccount `props.name`. */
export function componentDeployment(scope: Construct, props: ComponentDeploymentProps, pod: Omit<k8s.PodSpec, 'serviceAccountName' | 'automountServiceAccountToken'>): k8s.KubeDeployment {
  const { name, namespace, labels } = props;
  return new k8s.KubeDeployment(scope, 'Deployment', {
    metadata: { name, namespace, labels },
    spec: {
      replicas: props.replicas,
      selector: { matchLabels: { 'app.kubernetes.io/name': name } },
      template: {
        metadata: { labels },
        spec: { serviceAccountName: name, automountServiceAccountToken: true, ...pod },
      },
    },
  });
}
