"""HTTP test app: every response names the app version and the Ray cluster that served it.

Deployed through Serve's REST API with import_path "rayshift_testapp.app:build" and
args {"version": "v1", "cluster": "ray-a"}. The version comes from the builder args, so a new
version is a real redeploy (new replicas), as an image change would be on Kubernetes.
"""
import os

from ray import serve
from starlette.requests import Request
from starlette.responses import JSONResponse


@serve.deployment(ray_actor_options={"num_cpus": 0.1}, max_ongoing_requests=100)
class Version:
    def __init__(self, version: str, cluster: str):
        self.version = version
        self.cluster = cluster or os.environ.get("RAYSHIFT_CLUSTER", "")

    async def __call__(self, request: Request) -> JSONResponse:
        return JSONResponse(
            {"version": self.version, "cluster": self.cluster},
            headers={"x-rayshift-version": self.version},
        )


def build(args: dict):
    return Version.bind(str(args.get("version", "v1")), str(args.get("cluster", "")))
