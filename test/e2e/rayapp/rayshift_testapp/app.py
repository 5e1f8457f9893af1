"""HTTP test app: every response names the app version and the Ray cluster that served it.

Deployed through Serve's REST API with import_path "rayshift_testapp.app:build" and
args {"version": "v1", "cluster": "ray-a"}. The version comes from the builder args, so a new
version is a real redeploy (new replicas), as an image change would be on Kubernetes.

Faults for the metric-analysis tests, also from the args (a bad release, as users ship them):
- "error_every": N > 0 answers every N-th request of each replica with HTTP 500;
- "error_while": with error_every, only while a file at this path exists (a transient fault whose
  end the test chooses from what it observed: it deletes the file);
- "delay_ms": every answer waits this long first (a slower release).
"""
import asyncio
import os

from ray import serve
from starlette.requests import Request
from starlette.responses import JSONResponse


@serve.deployment(ray_actor_options={"num_cpus": 0.1}, max_ongoing_requests=100)
class Version:
    def __init__(self, version: str, cluster: str, error_every: int, error_while: str, delay_ms: int):
        self.version = version
        self.cluster = cluster or os.environ.get("RAYSHIFT_CLUSTER", "")
        self.error_every = error_every
        self.error_while = error_while
        self.delay_ms = delay_ms
        self.requests = 0

    def _fails(self) -> bool:
        self.requests += 1
        if self.error_every <= 0 or self.requests % self.error_every != 0:
            return False
        return self.error_while == "" or os.path.exists(self.error_while)

    async def __call__(self, request: Request) -> JSONResponse:
        if self.delay_ms > 0:
            await asyncio.sleep(self.delay_ms / 1000)
        body = {"version": self.version, "cluster": self.cluster}
        headers = {"x-rayshift-version": self.version}
        if self._fails():
            return JSONResponse({**body, "error": "injected fault"}, status_code=500, headers=headers)
        return JSONResponse(body, headers=headers)


def build(args: dict):
    return Version.bind(
        str(args.get("version", "v1")),
        str(args.get("cluster", "")),
        int(args.get("error_every", 0)),
        str(args.get("error_while", "")),
        int(args.get("delay_ms", 0)),
    )
