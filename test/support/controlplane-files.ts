/**
 * What a test control plane (controlplane.ts) starts from: its binaries' folder, a throwaway CA
 * and serving certificate made with `openssl`, the ServiceAccount signing key, the static token
 * file and the admin's kubeconfig. Test support, not the package's API.
 */
import { execFileSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { projectRoot } from '../../lib/crds/resolve';
import type { ExtraToken } from './controlplane';
import { runBinDirScript } from './processes';

/**
 * The folder with the control plane binaries: `$RAYSHIFT_CONTROLPLANE_BIN`, else the cache folder that
 * `scripts/build-controlplane.sh` builds into (computed by `scripts/controlplane-bin-dir.sh`).
 */
export function controlPlaneBinDir(): string {
  return runBinDirScript(path.join(projectRoot(), 'scripts', 'controlplane-bin-dir.sh'));
}

/** Writes `<dir>/pki` (CA, kube-apiserver's serving certificate for 127.0.0.1 and the in-cluster names) and `<dir>/sa.key`. */
export function writeTestPki(dir: string): void {
  const pki = path.join(dir, 'pki');
  fs.mkdirSync(pki, { recursive: true });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(pki, ['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '7', '-subj', '/CN=rayshift-test-ca',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  openssl(pki, ['req', '-new', ...ec, '-keyout', 'apiserver.key', '-out', 'apiserver.csr', '-subj', '/CN=kube-apiserver']);
  fs.writeFileSync(
    path.join(pki, 'apiserver.ext'),
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1',
      '',
    ].join('\n'),
  );
  openssl(pki, ['x509', '-req', '-in', 'apiserver.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial',
    '-out', 'apiserver.crt', '-days', '7', '-extfile', 'apiserver.ext']);
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  fs.writeFileSync(path.join(dir, 'sa.key'), privateKey.export({ type: 'pkcs1', format: 'pem' }), { mode: 0o600 });
}

/** Appends `tokens` to the static token file (`--token-auth-file`): CSV lines `token,user,uid,"group1,group2"`. */
export function appendTokens(file: string, tokens: readonly ExtraToken[]): void {
  const lines = tokens.map((t) => {
    const uid = t.uid ?? `${t.user}-uid`;
    for (const [k, v] of [['token', t.token], ['user', t.user], ['uid', uid], ...(t.groups ?? []).map((g) => ['group', g])]) {
      if (!v || /[",\s]/.test(v)) throw new Error(`extraTokens: ${k} ${JSON.stringify(v)} must be non-empty, without commas, quotes or spaces`);
    }
    const cols = [t.token, t.user, uid];
    if (t.groups?.length) cols.push(`"${t.groups.join(',')}"`);
    return cols.join(',') + '\n';
  });
  fs.appendFileSync(file, lines.join(''), { mode: 0o600 });
}

/** Writes a kubeconfig for `user` with bearer `token` on the server at `url`, verified against `caFile`. */
export function writeAdminKubeconfig(file: string, url: string, caFile: string, user: string, token: string): void {
  const kc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'rayshift-test', cluster: { server: url, 'certificate-authority': caFile } }],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: 'rayshift-test', context: { cluster: 'rayshift-test', user, namespace: 'default' } }],
    'current-context': 'rayshift-test',
  };
  fs.writeFileSync(file, stringify(kc), { mode: 0o600 });
}

function openssl(cwd: string, args: string[]): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const err = e as { stderr?: Buffer; message: string };
    throw new Error(`openssl ${args.slice(0, 2).join(' ')} failed: ${err.stderr?.toString().trim() || err.message}`);
  }
}
