/**
 * The real kubectl of the plugin tests, built by `scripts/build-kubectl.sh` (`npm run kubectl:build`)
 * from the k8s.io/kubectl module of the control plane's Kubernetes release, and the environment a
 * user's shell gives it: the package's `bin/` on PATH (where kubectl discovers `kubectl-rayshift`),
 * Node for the plugin's `#!/usr/bin/env node`, and nothing else that kubectl could take for a plugin.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { projectRoot } from '../../lib/crds/resolve';
import { isExecutable, runBinDirScript } from './processes';

/** The kubectl executable; throws, naming the build, when it is not built. */
export function kubectlPath(): string {
  const bin = runBinDirScript(path.join(projectRoot(), 'scripts', 'kubectl-bin-dir.sh'));
  const kubectl = path.join(bin, 'kubectl');
  if (!isExecutable(kubectl)) {
    throw new Error(`kubectl is not built: no ${kubectl}. Build it with \`npm run kubectl:build\` (bash scripts/build-kubectl.sh; 5-15 min on 2 cores when cold) or point RAYSHIFT_KUBECTL_BIN at a folder with a kubectl of the control plane's release.`);
  }
  return kubectl;
}

/**
 * PATH for kubectl: the package's `bin/` (the plugin under test), a folder holding only `node` (the
 * one running the tests, for the plugin's shebang) and kubectl's folder; `home` becomes HOME so that
 * no ~/.kube of the machine is read.
 */
export function pluginShellEnv(home: string, kubeconfig: string): NodeJS.ProcessEnv {
  const nodeDir = path.join(home, 'node-bin');
  fs.mkdirSync(nodeDir, { recursive: true });
  if (!fs.existsSync(path.join(nodeDir, 'node'))) fs.symlinkSync(process.execPath, path.join(nodeDir, 'node'));
  const PATH = [path.join(projectRoot(), 'bin'), nodeDir, path.dirname(kubectlPath())].join(path.delimiter);
  return { PATH, HOME: home, KUBECONFIG: kubeconfig, NO_COLOR: '1' };
}
