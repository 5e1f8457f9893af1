/**
 * A throwaway CA and a serving certificate signed by it, made with `openssl` for the test webhooks
 * that kube-apiserver calls over HTTPS (the TEST-ONLY simulated RBG webhook, and RBG v0.8.0-alpha.5's
 * real one, which loads its certificate from a Secret).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** PEM files written into a folder. */
export interface WebhookCertificate {
  readonly caCert: string;
  readonly caKey: string;
  readonly cert: string;
  readonly key: string;
}

/**
 * Writes `ca.crt`/`ca.key` and `tls.crt`/`tls.key` (P-256, serverAuth, subjectAltName `sans`, e.g.
 * `IP:127.0.0.1`) into `dir`, valid for `days`; returns their contents.
 */
export function makeWebhookCertificate(dir: string, sans: readonly string[], days = 1): WebhookCertificate {
  const ssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const valid = ['-days', String(days)];
  ssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', ...valid, '-subj', '/CN=rayshift-test-webhook-ca', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign']);
  ssl(['req', '-new', ...ec, '-keyout', 'tls.key', '-out', 'tls.csr', '-subj', '/CN=rayshift-test-webhook']);
  fs.writeFileSync(path.join(dir, 'tls.ext'), `basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=${sans.join(',')}\n`);
  ssl(['x509', '-req', '-in', 'tls.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'tls.crt', ...valid, '-extfile', 'tls.ext']);
  const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
  return { caCert: read('ca.crt'), caKey: read('ca.key'), cert: read('tls.crt'), key: read('tls.key') };
}
