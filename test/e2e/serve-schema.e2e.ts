/**
 * rayshift's list of Ray Serve's config fields (lib/spec/serve-schema.ts) is the installed Ray's
 * (the pinned ray[serve] of test/e2e/ray-requirements.txt, from `npm run e2e:setup`): each model's
 * fields, read from Ray's own pydantic models. And the premise of the check, on the real Ray:
 * Serve takes a config with a misspelt field and drops the field, so only rayshift can say it.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SERVE_SCHEMA_FIELDS, SERVE_SCHEMA_RAY_VERSION } from '../../lib/spec/serve-schema';
import { projectRoot } from '../../lib/crds/resolve';
import { rayVenvBin } from './support/ray-head';

const PROGRAM = `
import json, sys, warnings
warnings.simplefilter("ignore")
import ray
from ray.serve import schema, config
models = {"ServeDeploySchema": schema.ServeDeploySchema, "ServeApplicationSchema": schema.ServeApplicationSchema,
          "DeploymentSchema": schema.DeploymentSchema, "RayActorOptionsSchema": schema.RayActorOptionsSchema,
          "AutoscalingConfig": config.AutoscalingConfig}
fields = {name: sorted((getattr(m, "model_fields", None) or m.__fields__).keys()) for name, m in models.items()}
parse = getattr(schema.DeploymentSchema, "parse_obj", None) or schema.DeploymentSchema.model_validate
parsed = parse({"name": "llm", "num_replica": 4, "ray_actor_options": {"num_gpu": 1}})
dump = getattr(parsed, "dict", None) or parsed.model_dump
kept = dump(exclude_unset=True)
print(json.dumps({"version": ray.__version__, "fields": fields, "kept": kept}))
`;

test("the field lists are the installed Ray's, and Serve silently drops a misspelt field", () => {
  const python = path.join(rayVenvBin(), 'python');
  expect(fs.existsSync(python)).toBe(true);
  const out = JSON.parse(execFileSync(python, ['-c', PROGRAM], { cwd: projectRoot(), encoding: 'utf8' }));
  expect(out.version).toBe(SERVE_SCHEMA_RAY_VERSION);
  expect(out.fields).toEqual(Object.fromEntries(Object.entries(SERVE_SCHEMA_FIELDS).map(([k, v]) => [k, [...v].sort()])));
  // Accepted without an error, the typos gone: 4 replicas and 1 GPU each were asked for, neither is kept.
  expect(out.kept.num_replica).toBeUndefined();
  expect(out.kept.num_replicas).toBeUndefined();
  expect(JSON.stringify(out.kept.ray_actor_options ?? {})).not.toContain('num_gpu');
});
