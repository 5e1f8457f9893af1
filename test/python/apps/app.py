"""The Python twin of test/python/apps.ts's `buildApp`: the same props through rayshift_cdk8s.

Usage: python app.py OUTDIR [bad]. With `bad`, it builds the same bad options as `buildBadApp`.
"""
import sys

from cdk8s import ApiObjectMetadata, App, Chart, YamlOutputType

import rayshift_cdk8s as rs


def sglang(role, gpus):
    limits = {"nvidia.com/gpu": str(gpus)} if gpus > 0 else {"cpu": "2", "memory": "4Gi"}
    return rs.PodTemplateJson(
        metadata=rs.PodTemplateMetadata(labels={"app": role}),
        spec={"containers": [{"name": role, "image": "lmsysorg/sglang:v0.5.5", "resources": {"limits": limits}}]},
    )


def build_app(outdir):
    app = App(outdir=outdir, yaml_output_type=YamlOutputType.FILE_PER_APP)
    llm = Chart(app, "llm", namespace="serving")
    rs.RayService(
        llm, "llm",
        metadata=ApiObjectMetadata(name="llm"),
        ray_cluster_config=rs.RayClusterSpecBuilder(
            image="rayproject/ray-llm:2.52.0-py311-cu128",
            ray_version="2.52.0",
            head=rs.RayHeadProps(
                resources=rs.RayContainerResources(cpu="4", memory="16Gi"),
                pod_spec=rs.RayPodSettings(service_account_name="ray", node_selector={"pool": "cpu"}),
            ),
            worker_groups=[rs.RayWorkerGroupProps(
                group_name="gpu", min_replicas=1, max_replicas=8,
                resources=rs.RayContainerResources(cpu="8", memory="64Gi", accelerators=1),
            )],
        ),
        serve_config=rs.ServeConfig(
            http_options={"request_timeout_s": 60},
            applications=[
                rs.ServeApplicationConfig(
                    name="chat", import_path="ray.serve.llm:build_openai_app", route_prefix="/",
                    args={"llm_configs": [{"model_loading_config": {"model_id": "qwen-0.5b", "model_source": "Qwen/Qwen2.5-0.5B-Instruct"}}]},
                    deployments=[rs.ServeDeploymentConfig(name="LLMServer", num_replicas="auto", ray_actor_options={"num_gpus": 1})],
                ),
                rs.ServeApplicationConfig(name="embed", import_path="embedder.app:app", http_disabled=True),
            ],
        ),
        upgrade_strategy=rs.RayServiceUpgradeStrategy(
            type="NewClusterWithIncrementalUpgrade",
            cluster_upgrade_options=rs.ClusterUpgradeOptions(max_surge_percent=20, step_size_percent=5, interval_seconds=60, gateway_class_name="traefik"),
        ),
        executor="operator",
        rayshift=rs.RayshiftExtensions(gateway_ref=rs.GatewayReference(name="shared"), progress_deadline_seconds=900),
    )
    gwc = rs.GatewayClass(llm, "gwc", metadata=ApiObjectMetadata(name="traefik"), controller_name="traefik.io/gateway-controller")
    gw = rs.Gateway(llm, "gw", metadata=ApiObjectMetadata(name="shared"), gateway_class=gwc,
                    listeners=[rs.GatewayListener(name="http", protocol="HTTP", port=80), rs.GatewayListener(name="grpc", protocol="HTTP", port=9000)])
    rs.HttpRoute(llm, "route", metadata=ApiObjectMetadata(name="chat"), parents=[gw], hostnames=["chat.example.com"], rules=[
        rs.HttpRouteRule(
            matches=[rs.HttpRouteMatch(path=rs.HttpPathMatch(type="PathPrefix", value="/v1"), headers=[rs.NameValueMatch(name="x-tenant", value="a")])],
            backend_refs=[rs.BackendReference(name="llm-a-serve-svc", port=8000, weight=90), rs.BackendReference(name="llm-b-serve-svc", port=8000, weight=10)],
        ),
    ])
    rs.GrpcRoute(llm, "grpc", metadata=ApiObjectMetadata(name="embed"), parents=[rs.ParentReference(name="shared", section_name="grpc")], rules=[
        rs.GrpcRouteRule(
            matches=[rs.GrpcRouteMatch(method=rs.GrpcMethodMatch(service="embedder.Embedder"))],
            backend_refs=[rs.BackendReference(name="llm-a-serve-svc", port=9000, weight=100)],
        ),
    ])

    pd = Chart(app, "pd", namespace="pd")
    roles = [
        rs.RoleSpec(name="router", replicas=2, template=sglang("router", 0)),
        rs.RoleSpec(name="prefill", replicas=40, template=sglang("prefill", 1)),
        rs.RoleSpec(name="decode", replicas=20, template=sglang("decode", 1)),
    ]
    rs.RoleBasedGroup(pd, "pd", metadata=ApiObjectMetadata(name="pd-inference"), roles=roles, coordination=[
        rs.CoordinationRule(name="pd-rollout", roles=["prefill", "decode"],
                            rolling_update=rs.RollingUpdateCoordination(max_skew="10%", max_unavailable="10%", partition="20%")),
    ])
    rs.RoleBasedGroup(pd, "operated", metadata=ApiObjectMetadata(name="pd-operated"), roles=roles, executor="operator", rbg_version="v0.8", coordination=[
        rs.CoordinationRule(name="pd-rollout", roles=["prefill", "decode"], progress_deadline_seconds=600,
                            rolling_update=rs.RollingUpdateCoordination(max_skew="10%", max_unavailable=2)),
    ], warmup=rs.RolloutWarmup(parallelism=2, pull_secrets=["regcred"]))
    return app


def build_bad_app(outdir):
    app = App(outdir=outdir, yaml_output_type=YamlOutputType.FILE_PER_APP)
    chart = Chart(app, "bad", namespace="serving")
    rs.RayService(
        chart, "llm",
        metadata=ApiObjectMetadata(name="llm"),
        ray_cluster_config=rs.RayClusterSpecBuilder(
            image="rayproject/ray:2.52.0",
            head=rs.RayHeadProps(resources=rs.RayContainerResources(cpu="1", memory="2Gi")),
            worker_groups=[rs.RayWorkerGroupProps(group_name="w", max_replicas=2, resources=rs.RayContainerResources(cpu="1", memory="2Gi"))],
        ),
        serve_config=rs.ServeConfig(applications=[rs.ServeApplicationConfig(name="a", import_path="not a path", http_disabled=True, route_prefix="/a")]),
        upgrade_strategy=rs.RayServiceUpgradeStrategy(
            type="NewClusterWithIncrementalUpgrade",
            cluster_upgrade_options=rs.ClusterUpgradeOptions(max_surge_percent=0, step_size_percent=150, interval_seconds=0, gateway_class_name="traefik"),
        ),
    )
    rs.RoleBasedGroup(chart, "pd", metadata=ApiObjectMetadata(name="pd"), roles=[
        rs.RoleSpec(name="prefill", replicas=2, template=sglang("prefill", 1)),
        rs.RoleSpec(name="decode", replicas=1, template=sglang("decode", 1)),
    ], coordination=[rs.CoordinationRule(name="pd", roles=["prefill", "missing"], rolling_update=rs.RollingUpdateCoordination(max_skew="150%"))])
    return app


if __name__ == "__main__":
    (build_bad_app if sys.argv[2:] == ["bad"] else build_app)(sys.argv[1]).synth()
