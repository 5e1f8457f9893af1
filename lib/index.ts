/** rayshift: typed infrastructure-as-code for serving models on Ray and RoleBasedGroup. */
export * from './spec';
export * from './cdk8s';
export * from './crds/catalog';
export * from './crds/rayshift-crd';
export * from './engine';
export * from './engine/from-spec';
