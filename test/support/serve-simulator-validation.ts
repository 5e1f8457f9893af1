/**
 * Deploy-config validation of the TEST-ONLY Serve simulator (serve-simulator.ts): the checks of
 * Ray's `ServeDeploySchema` a `PUT /api/serve/applications/` body goes through, with pydantic's
 * error texts, so that clients see the 400 answers a real dashboard gives.
 */
import { JsonObject, isObj } from './serve-simulator-json';

/** A body the schema rejects; its message is the 400 answer's text. */
class Validation extends Error {}

/** Checks a parsed PUT body against Ray's `ServeDeploySchema`; the thrown error's message is the 400 text. */
export function validateSimulatedDeploy(body: unknown): JsonObject {
  if (!isObj(body)) throw new Validation('1 validation error for ServeDeploySchema\n__root__\n  value is not a valid dict (type=type_error.dict)');
  const apps = body.applications;
  if (!Array.isArray(apps)) throw new Validation('1 validation error for ServeDeploySchema\napplications\n  field required (type=value_error.missing)');
  const tc = body.target_capacity;
  if (tc !== undefined && tc !== null) {
    if (typeof tc !== 'number') throw new Validation('1 validation error for ServeDeploySchema\ntarget_capacity\n  value is not a valid float (type=type_error.float)');
    if (tc < 0) throw new Validation('1 validation error for ServeDeploySchema\ntarget_capacity\n  ensure this value is greater than or equal to 0 (type=value_error.number.not_ge; limit_value=0)');
    if (tc > 100) throw new Validation('1 validation error for ServeDeploySchema\ntarget_capacity\n  ensure this value is less than or equal to 100 (type=value_error.number.not_le; limit_value=100)');
  }
  const names = new Set<string>();
  const prefixes = new Set<string>();
  apps.forEach((app, i) => {
    const at = `applications -> ${i}`;
    if (!isObj(app)) throw new Validation(`1 validation error for ServeDeploySchema\n${at}\n  value is not a valid dict`);
    if (typeof app.import_path !== 'string') throw new Validation(`1 validation error for ServeDeploySchema\n${at} -> import_path\n  field required (type=value_error.missing)`);
    if ('host' in app || 'port' in app) throw new Validation(`1 validation error for ServeDeploySchema\n${at}\n  host and port must be set in http_options, not in an application`);
    const name = typeof app.name === 'string' ? app.name : 'default';
    if (name === '' || names.has(name)) throw new Validation(`1 validation error for ServeDeploySchema\napplications\n  Found duplicate or empty application name '${name}'`);
    names.add(name);
    const prefix = app.route_prefix === undefined ? '/' : app.route_prefix;
    if (prefix !== null) {
      if (typeof prefix !== 'string' || !prefix.startsWith('/') || (prefix !== '/' && prefix.endsWith('/')) || /[{}]/.test(prefix)) {
        throw new Validation(`1 validation error for ServeDeploySchema\n${at} -> route_prefix\n  route_prefix "${String(prefix)}" is invalid`);
      }
      if (prefixes.has(prefix)) throw new Validation(`1 validation error for ServeDeploySchema\napplications\n  Found duplicate route prefix '${prefix}'`);
      prefixes.add(prefix);
    }
    const env = app.runtime_env;
    if (isObj(env) && typeof env.working_dir === 'string' && !env.working_dir.includes('://')) {
      throw new Validation(`1 validation error for ServeDeploySchema\n${at} -> runtime_env\n  working_dir must be a remote URI, got "${env.working_dir}"`);
    }
    const deps = app.deployments ?? [];
    if (!Array.isArray(deps)) throw new Validation(`1 validation error for ServeDeploySchema\n${at} -> deployments\n  value is not a valid list`);
    deps.forEach((dep, j) => {
      const dat = `${at} -> deployments -> ${j}`;
      if (!isObj(dep) || typeof dep.name !== 'string') throw new Validation(`1 validation error for ServeDeploySchema\n${dat} -> name\n  field required`);
      const n = dep.num_replicas;
      if (n !== undefined && n !== null && n !== 'auto' && !(typeof n === 'number' && Number.isInteger(n) && n > 0)) {
        throw new Validation(`1 validation error for ServeDeploySchema\n${dat} -> num_replicas\n  value must be a positive integer or "auto"`);
      }
      if (typeof n === 'number' && isObj(dep.autoscaling_config)) {
        throw new Validation(`1 validation error for ServeDeploySchema\n${dat} -> __root__\n  Manually setting num_replicas is not allowed when autoscaling_config is provided.`);
      }
    });
  });
  return body;
}
