/**
 * The Serve `import_path` rule, as Ray resolves it. Ray Serve checks the form in
 * `ServeApplicationSchema.import_path_format_valid` (`ray/serve/schema.py`): at most one `:`,
 * not first or last; without a `:`, at least one `.`, not first or last. It then imports with
 * `ray._private.utils.import_attr`: split at the `:` (or the last `.`), `importlib.import_module`
 * on the module part, `getattr` on the attribute. `import_module` finds modules by their file and
 * directory names on `sys.path`, so a name need not be a Python identifier: `ray-operator.config.
 * samples.ray-serve.single_deployment_dag:DagNode` (KubeRay v1.7.0's
 * `ray-service.no-ray-serve-replica.yaml`) imports from a `working_dir` archive.
 *
 * Rejected, because they can never import: a non-string or empty path; whitespace or `/`, `\`
 * (Ray passes the text unchanged, so they would have to be part of a file name); what Serve's
 * schema rejects; a module part starting with `.` (a relative import, which `import_module`
 * refuses without a package) or with an empty name between dots; and an attribute that is not a
 * Python identifier (`getattr` finds only names Python code defines).
 */
import { show } from './problem';

const ATTRIBUTE = /^[\p{ID_Start}_][\p{ID_Continue}]*$/u;

/** The forms Ray accepts, for messages. */
export const IMPORT_PATH_FORMS = '"module.path:attribute" or "module.path.attribute"';

/**
 * Checks a Serve application's `import_path`; returns what is wrong (naming the value and the
 * allowed forms), or undefined when Ray's importer can resolve it.
 */
export function importPathProblem(value: unknown): string | undefined {
  const expected = `must be a Python import path ${IMPORT_PATH_FORMS}; got ${show(value)}`;
  if (typeof value !== 'string') return expected;
  const why = (reason: string) => `${expected} (${reason})`;
  if (value.length === 0) return why('it is empty');
  if (/\s/u.test(value)) return why('it contains whitespace');
  if (/[/\\]/.test(value)) return why('modules are separated by ".", not "/" or "\\"');
  const colons = value.split(':').length - 1;
  if (colons > 1) return why(`it has ${colons} ":"; at most one separates the module from the attribute`);
  let module: string;
  let attribute: string;
  if (colons === 1) {
    [module, attribute] = value.split(':');
    if (module === '') return why('nothing before ":" names the module');
    if (attribute === '') return why('nothing after ":" names the attribute');
  } else {
    const dot = value.lastIndexOf('.');
    if (dot < 0) return why('a ":" or "." must separate the module from the attribute');
    module = value.slice(0, dot);
    attribute = value.slice(dot + 1);
    if (attribute === '') return why('it ends with "."; nothing names the attribute');
    if (module === '') return why('nothing before "." names the module');
  }
  if (module.startsWith('.')) return why(`module ${show(module)} is relative; Ray imports absolute module paths`);
  if (module.split('.').includes('')) return why(`module ${show(module)} has an empty name between dots`);
  if (!ATTRIBUTE.test(attribute)) return why(`attribute ${show(attribute)} is not a Python identifier`);
  return undefined;
}
