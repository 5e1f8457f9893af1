"""The Python twin of the TypeScript programs of test/integration/pulumi-plugin.test.ts and
cluster-pulumi-rayservice.test.ts: the rayshift components through the SDK generated from the plugin
package's schema (scripts/build-pulumi-sdk.sh), run as an inline Automation API program by the real
Pulumi CLI.

Usage: python program.py PROJECT STACK OPERATION VARIANT
  OPERATION: preview or up. VARIANT: `all` (every component), `bad` (bad RayService options),
  `service` (one RayService run by executor `pulumi`, its settings in $RAYSHIFT_SERVICE_SETTINGS as
  JSON: namespace, cpu, serveConfig, kubeconfig, dashboardAddressTemplate) or `file` (the program
  in $RAYSHIFT_PROGRAM_FILE, as `pulumi up` would run its __main__.py). The environment names the
  CLI, the state backend, PULUMI_HOME, the stack's folder (RAYSHIFT_WORK_DIR) and the plugin's
  provider (PULUMI_DEBUG_PROVIDERS).
Prints one JSON line: {"urns": [...], "objects": {urn: inputs}, "outputs": {...}} or {"error": "..."}
(objects: the inputs of the Kubernetes resources the components render).
"""
import json
import os
import sys

import pulumi
from pulumi import automation as auto

import rayshift_pulumi as rs


def sglang(role):
    return rs.PodTemplateJsonArgs(
        metadata=rs.PodTemplateMetadataArgs(labels={"app": role}),
        spec={"containers": [{"name": role, "image": "lmsysorg/sglang:v0.5.5", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
    )


def ray_cluster(cpu):
    container = {"name": "ray", "image": "rayproject/ray:2.52.0", "resources": {"limits": {"cpu": cpu, "memory": "2Gi"}}}
    return rs.RayClusterConfigArgs(
        ray_version="2.52.0", enable_in_tree_autoscaling=True,
        head_group_spec=rs.HeadGroupSpecArgs(ray_start_params={}, template=rs.PodTemplateJsonArgs(spec={"containers": [container]})),
        worker_group_specs=[rs.WorkerGroupSpecArgs(
            group_name="cpu", replicas=1, min_replicas=1, max_replicas=4, ray_start_params={},
            template=rs.PodTemplateJsonArgs(spec={"containers": [{**container, "name": "ray-worker"}]}),
        )],
    )


def service_program(settings):
    """One RayService whose upgrades Pulumi runs, as the TypeScript `executor pulumi` block has it."""
    def run():
        image = "rayproject/ray:2.52.0"
        head = {"name": "ray-head", "image": image, "ports": [{"name": "serve", "containerPort": 8000}, {"name": "dashboard", "containerPort": 8265}]}
        worker = {"name": "ray-worker", "image": image, "resources": {"requests": {"cpu": settings["cpu"]}}}
        service = rs.RayService(
            "fruit",
            executor=rs.RayServiceComponentExecutor.PULUMI,
            metadata=rs.ApiObjectMetadataArgs(name="fruit", namespace=settings["namespace"]),
            ray_cluster_config=rs.RayClusterConfigArgs(
                enable_in_tree_autoscaling=True,
                head_group_spec=rs.HeadGroupSpecArgs(ray_start_params={"num-cpus": "0"}, template=rs.PodTemplateJsonArgs(spec={"containers": [head]})),
                worker_group_specs=[rs.WorkerGroupSpecArgs(group_name="small", replicas=1, min_replicas=1, max_replicas=4,
                                                           template=rs.PodTemplateJsonArgs(spec={"containers": [worker]}))],
            ),
            serve_config=settings["serveConfig"],
            upgrade_strategy=rs.RayServiceUpgradeStrategyArgs(
                type=rs.UpgradeStrategyType.NEW_CLUSTER_WITH_INCREMENTAL_UPGRADE,
                cluster_upgrade_options=rs.ClusterUpgradeOptionsArgs(max_surge_percent=50, step_size_percent=25, interval_seconds=1, gateway_class_name="simulated"),
            ),
            ray_cluster_deletion_delay_seconds=0,
            kubeconfig=pulumi.Output.secret(settings["kubeconfig"]),
            dashboard_address_template=settings["dashboardAddressTemplate"],
            capacity_poll_ms=50,
            deadline_seconds=300,
        )
        pulumi.export("active", service.active_cluster_name)
    return run


def program(bad):
    def run():
        if bad:
            rs.RayService(
                "llm", metadata=rs.ApiObjectMetadataArgs(name="llm", namespace="serving"), ray_cluster_config=ray_cluster("1"),
                serve_config=rs.ServeConfigArgs(applications=[rs.ServeApplicationConfigArgs(name="a", import_path="not a path")]),
                upgrade_strategy=rs.RayServiceUpgradeStrategyArgs(
                    type=rs.UpgradeStrategyType.NEW_CLUSTER_WITH_INCREMENTAL_UPGRADE,
                    cluster_upgrade_options=rs.ClusterUpgradeOptionsArgs(max_surge_percent=0, step_size_percent=150, interval_seconds=0, gateway_class_name="traefik"),
                ),
            )
            return
        rs.GatewayClass("gwc", metadata=rs.ApiObjectMetadataArgs(name="traefik"), controller_name="traefik.io/gateway-controller")
        gw = rs.Gateway("gw", metadata=rs.ApiObjectMetadataArgs(name="shared", namespace="serving"), gateway_class="traefik",
                        listeners=[rs.GatewayListenerArgs(name="http", protocol="HTTP", port=80), rs.GatewayListenerArgs(name="grpc", protocol="HTTP", port=9000)])
        route = rs.HttpRoute("route", metadata=rs.ApiObjectMetadataArgs(name="chat", namespace="serving"),
                             parents=[rs.ParentReferenceArgs(name="shared", namespace="serving")], hostnames=["chat.example.com"], rules=[
            rs.HttpRouteRuleArgs(
                matches=[rs.HttpRouteMatchArgs(path=rs.HttpPathMatchArgs(type=rs.PathMatchType.PATH_PREFIX, value="/v1"))],
                backend_refs=[rs.BackendReferenceArgs(name="llm-a-serve-svc", port=8000, weight=90), rs.BackendReferenceArgs(name="llm-b-serve-svc", port=8000, weight=10)],
            ),
        ], opts=pulumi.ResourceOptions(depends_on=[gw]))
        rs.GrpcRoute("grpc", metadata=rs.ApiObjectMetadataArgs(name="embed", namespace="serving"),
                     parents=[rs.ParentReferenceArgs(name="shared", namespace="serving", section_name="grpc")], rules=[
            rs.GrpcRouteRuleArgs(
                matches=[rs.GrpcRouteMatchArgs(method=rs.GrpcMethodMatchArgs(service="embedder.Embedder"))],
                backend_refs=[rs.BackendReferenceArgs(name="llm-a-serve-svc", port=9000, weight=100)],
            ),
        ])
        service = rs.RayService(
            "llm", metadata=rs.ApiObjectMetadataArgs(name="llm", namespace="serving"), ray_cluster_config=ray_cluster("1"),
            serve_config=rs.ServeConfigArgs(applications=[rs.ServeApplicationConfigArgs(name="chat", import_path="app:deployment", route_prefix="/")]),
            upgrade_strategy=rs.RayServiceUpgradeStrategyArgs(
                type=rs.UpgradeStrategyType.NEW_CLUSTER_WITH_INCREMENTAL_UPGRADE,
                cluster_upgrade_options=rs.ClusterUpgradeOptionsArgs(max_surge_percent=50, step_size_percent=25, interval_seconds=30, gateway_class_name="traefik"),
            ),
            executor=rs.RayServiceComponentExecutor.OPERATOR,
        )
        group = rs.RoleBasedGroup("pd", metadata=rs.ApiObjectMetadataArgs(name="pd", namespace="serving"), roles=[
            rs.RoleSpecArgs(name="prefill", replicas=4, template=sglang("prefill")),
            rs.RoleSpecArgs(name="decode", replicas=2, template=sglang("decode")),
        ], coordination=[rs.CoordinationRuleArgs(name="pd", roles=["prefill", "decode"],
                                                 rolling_update=rs.RollingUpdateCoordinationArgs(max_skew="10%", max_unavailable=1))])
        pulumi.export("route", route.route_name)
        pulumi.export("service", service.service_name)
        pulumi.export("executor", service.executor)
        pulumi.export("group", group.group_name)
    return run


def main():
    project, stack_name, operation, variant = sys.argv[1:5]
    if variant == "service":
        run = service_program(json.loads(os.environ["RAYSHIFT_SERVICE_SETTINGS"]))
    elif variant == "file":
        source = open(os.environ["RAYSHIFT_PROGRAM_FILE"], encoding="utf-8").read()
        run = lambda: exec(compile(source, os.environ["RAYSHIFT_PROGRAM_FILE"], "exec"), {"__name__": "__main__"})
    else:
        run = program(variant == "bad")
    stack = auto.create_or_select_stack(
        stack_name=stack_name, project_name=project, program=run,
        opts=auto.LocalWorkspaceOptions(
            work_dir=os.environ["RAYSHIFT_WORK_DIR"],
            pulumi_home=os.environ["PULUMI_HOME"],
            project_settings=auto.ProjectSettings(name=project, runtime="python", backend=auto.ProjectBackend(url=os.environ["PULUMI_BACKEND_URL"])),
        ),
    )
    urns = []
    objects = {}

    def on_event(event):
        if event.resource_pre_event is not None:
            metadata = event.resource_pre_event.metadata
            urns.append(metadata.urn)
            # What the components render: the inputs of their Kubernetes children.
            if metadata.type.startswith("kubernetes:") and metadata.new is not None:
                objects[metadata.urn] = metadata.new.inputs

    try:
        if operation == "preview":
            stack.preview(on_event=on_event, on_output=lambda line: print(line, file=sys.stderr))
            outputs = {}
        else:
            result = stack.up(on_event=on_event, on_output=lambda line: print(line, file=sys.stderr))
            outputs = {k: v.value for k, v in result.outputs.items()}
    except auto.errors.CommandError as error:
        print(json.dumps({"error": str(error)}))
        return
    print(json.dumps({"urns": urns, "objects": objects, "outputs": outputs}))


if __name__ == "__main__":
    main()
