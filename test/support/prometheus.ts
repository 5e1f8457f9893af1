/**
 * A real Prometheus server for tests: upstream Prometheus 3, built from Go modules by
 * `scripts/build-prometheus.sh` (see `test/prometheus/`; no service discovery but static/file/http,
 * no web UI, only the HTTP API), run as a child process on a free loopback port with a generated
 * `prometheus.yml` (static scrape targets, and file-based discovery for targets that change while it
 * runs) and its TSDB in a temporary folder.
 *
 * It runs in its own process group (see `processes.ts`). `stop()` kills it and removes the folder; a
 * watchdog that reads a pipe from this process does the same if this process dies without `stop()`.
 * `RAYSHIFT_KEEP_PROMETHEUS=1` keeps the folder (config, data, log).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { projectRoot } from '../../lib/crds/resolve';
import { freePorts, httpGet, isExecutable, pollUntil, Proc, runBinDirScript, Supervisor } from './processes';

/** Options of `startPrometheus`. */
export interface PrometheusOptions {
  /** Scrape jobs: job name → its static targets, each `host:port` (e.g. `127.0.0.1:9100`). */
  readonly targets: Readonly<Record<string, readonly string[]>>;
  /**
   * Scrape jobs whose targets change while Prometheus runs (file-based discovery): set them with
   * `RunningPrometheus.setTargets`; none until then.
   */
  readonly discoveredJobs?: readonly string[];
  /** Scrape interval (and timeout) of every job, a Prometheus duration. @default '1s' */
  readonly scrapeInterval?: string;
  /** HTTP path the targets serve their metrics on. @default '/metrics' */
  readonly metricsPath?: string;
  /** TSDB retention (`--storage.tsdb.retention.time`). @default '1h' */
  readonly retention?: string;
  /** Folder holding `prometheus`; default `test/prometheus/bin-dir.sh`'s (the build cache or `RAYSHIFT_PROMETHEUS_BIN`). */
  readonly binDir?: string;
  /** How long to wait for `/-/ready`. @default 60_000 */
  readonly readyTimeoutMs?: number;
}

/** Options of `RunningPrometheus.waitForScrape`. */
export interface WaitForScrapeOptions {
  /** Wait for scrapes that started after this instant (e.g. after the target changed a value). @default the epoch */
  readonly after?: Date | number;
  /** @default 30_000 */
  readonly timeoutMs?: number;
}

/** Targets sharing labels, as file-based discovery reads them (`[{targets, labels}]`). */
export interface TargetGroup {
  /** `host:port` of each. */
  readonly targets: readonly string[];
  /** Labels added to every series scraped from them (e.g. the RayCluster a Ray head serves). */
  readonly labels?: Readonly<Record<string, string>>;
}

/** A running Prometheus. */
export interface RunningPrometheus {
  /** `http://127.0.0.1:<port>`, the base of the HTTP API (`/api/v1/...`). */
  readonly address: string;
  /** The temporary folder (prometheus.yml, data/, prometheus.log); removed by `stop()`. */
  readonly dir: string;
  /** Its log file (stdout and stderr). */
  readonly log: string;
  /**
   * Waits until every target of `job` is up and has been scraped (after `opts.after`, when given),
   * per `/api/v1/targets` (health `up`, `lastScrape`), and that scrape's samples are queryable.
   */
  waitForScrape(job: string, opts?: WaitForScrapeOptions): Promise<void>;
  /** Replaces the targets of a discovered job (written atomically; Prometheus reads the file when it changes). */
  setTargets(job: string, groups: readonly TargetGroup[]): void;
  /** SIGTERM, SIGKILL after 10 s; removes `dir` (unless RAYSHIFT_KEEP_PROMETHEUS=1). Idempotent. */
  stop(): Promise<void>;
}

/** The folder holding the built `prometheus` (`$RAYSHIFT_PROMETHEUS_BIN` or the build cache). */
export function prometheusBinDir(): string {
  return runBinDirScript(path.join(projectRoot(), 'test', 'prometheus', 'bin-dir.sh'));
}

/** Starts Prometheus scraping `opts.targets` and waits until `/-/ready` answers 200. */
export async function startPrometheus(opts: PrometheusOptions): Promise<RunningPrometheus> {
  const bin = path.join(opts.binDir ?? prometheusBinDir(), 'prometheus');
  if (!isExecutable(bin)) {
    throw new Error(
      `${bin} not found. Build it with \`npm run prometheus:build\` (bash scripts/build-prometheus.sh; ` +
        'several minutes when cold) or point RAYSHIFT_PROMETHEUS_BIN at a folder holding a prebuilt `prometheus`.',
    );
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-prometheus-'));
  const prom = new LocalPrometheus(bin, dir, opts);
  try {
    await prom.start();
    return prom;
  } catch (e) {
    await prom.stop();
    throw e;
  }
}

/** One target of `/api/v1/targets` (the fields used here). */
interface ActiveTarget {
  readonly scrapePool: string;
  readonly scrapeUrl: string;
  readonly health: string;
  readonly lastScrape: string;
  readonly lastError: string;
}

class LocalPrometheus implements RunningPrometheus {
  address = '';
  readonly log: string;
  private readonly supervisor: Supervisor;
  private proc?: Proc;
  private stopped = false;
  /** Each discovered job's current targets. */
  private readonly discovered = new Map<string, readonly string[]>();

  constructor(
    private readonly bin: string,
    readonly dir: string,
    private readonly opts: PrometheusOptions,
  ) {
    this.log = path.join(dir, 'prometheus.log');
    this.supervisor = new Supervisor(dir, 'RAYSHIFT_KEEP_PROMETHEUS');
  }

  async start(): Promise<void> {
    const [port] = await freePorts(1);
    this.address = `http://127.0.0.1:${port}`;
    const interval = this.opts.scrapeInterval ?? '1s';
    const config = {
      global: { scrape_interval: interval, scrape_timeout: interval, evaluation_interval: interval },
      scrape_configs: [
        ...Object.entries(this.opts.targets).map(([job, targets]) => ({
          job_name: job,
          metrics_path: this.opts.metricsPath ?? '/metrics',
          static_configs: [{ targets: [...targets] }],
        })),
        ...(this.opts.discoveredJobs ?? []).map((job) => ({
          job_name: job,
          metrics_path: this.opts.metricsPath ?? '/metrics',
          file_sd_configs: [{ files: [this.targetsFile(job)] }],
        })),
      ],
    };
    for (const job of this.opts.discoveredJobs ?? []) this.setTargets(job, []);
    const configFile = path.join(this.dir, 'prometheus.yml');
    fs.writeFileSync(configFile, stringify(config));
    this.proc = this.supervisor.launch(
      'prometheus',
      this.bin,
      [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${path.join(this.dir, 'data')}`,
        `--storage.tsdb.retention.time=${this.opts.retention ?? '1h'}`,
        `--web.listen-address=127.0.0.1:${port}`,
        `--web.external-url=${this.address}/`,
        // Hidden flag: the scrape manager applies discovered targets every 5 s by default, so the
        // first scrape would wait up to 5 s after start.
        '--scrape.discovery-reload-interval=200ms',
      ],
      this.log,
    );
    await pollUntil(
      `Prometheus ready at ${this.address}/-/ready`,
      async () => {
        const r = await httpGet(`${this.address}/-/ready`);
        return r.status === 200 ? undefined : `HTTP ${r.status} ${r.text.trim().slice(0, 200)}`;
      },
      { timeoutMs: this.opts.readyTimeoutMs ?? 60_000, procs: [this.proc], logs: [{ file: this.log, lines: 30 }] },
    );
  }

  setTargets(job: string, groups: readonly TargetGroup[]): void {
    if (!(this.opts.discoveredJobs ?? []).includes(job)) throw new Error(`no discovered scrape job ${JSON.stringify(job)}; they are ${JSON.stringify(this.opts.discoveredJobs ?? [])}`);
    const file = this.targetsFile(job);
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(groups.map((g) => ({ targets: [...g.targets], labels: { ...g.labels } }))));
    fs.renameSync(`${file}.tmp`, file);
    this.discovered.set(job, groups.flatMap((g) => g.targets));
  }

  private targetsFile(job: string): string {
    return path.join(this.dir, `targets-${job}.json`);
  }

  async waitForScrape(job: string, opts: WaitForScrapeOptions = {}): Promise<void> {
    if (this.stopped || !this.proc) throw new Error(`Prometheus in ${this.dir} is stopped`);
    const expected = this.opts.targets[job] ?? this.discovered.get(job);
    if (!expected) throw new Error(`no scrape job ${JSON.stringify(job)}; the jobs are ${JSON.stringify(Object.keys(this.opts.targets))}`);
    if (expected.length === 0) throw new Error(`scrape job ${JSON.stringify(job)} has no targets`);
    const after = opts.after === undefined ? 0 : new Date(opts.after).getTime();
    await pollUntil(
      `a scrape of every target of job ${job}${opts.after === undefined ? '' : ` after ${new Date(after).toISOString()}`}`,
      async () => {
        const r = await httpGet(`${this.address}/api/v1/targets?state=active&scrapePool=${encodeURIComponent(job)}`);
        if (r.status !== 200) return `HTTP ${r.status} ${r.text.slice(0, 200)}`;
        const all = (JSON.parse(r.text) as { data: { activeTargets: ActiveTarget[] } }).data.activeTargets;
        const targets = all.filter((t) => t.scrapePool === job);
        if (targets.length !== expected.length) return `${targets.length} of ${expected.length} targets discovered`;
        const waiting = targets.filter((t) => t.health !== 'up' || !(Date.parse(t.lastScrape) > after));
        if (waiting.length > 0) {
          return waiting.map((t) => `${t.scrapeUrl}: health ${t.health}, last scrape ${t.lastScrape}${t.lastError ? `, error ${t.lastError}` : ''}`).join('; ');
        }
        // A target's lastScrape is set just before the scrape's samples are committed: wait until
        // the TSDB holds each target's `up` sample of such a scrape (committed with its samples).
        const q = await httpGet(`${this.address}/api/v1/query?query=${encodeURIComponent(`timestamp(up{job=${JSON.stringify(job)}})`)}`);
        if (q.status !== 200) return `query of up: HTTP ${q.status} ${q.text.slice(0, 200)}`;
        const stamps = (JSON.parse(q.text) as { data: { result: Array<{ value: [number, string] }> } }).data.result.map((s) => Math.round(Number(s.value[1]) * 1000));
        const committed = stamps.filter((ms) => ms > after).length;
        return committed === expected.length ? undefined : `${committed} of ${expected.length} targets' scrapes committed to the TSDB`;
      },
      { timeoutMs: opts.timeoutMs ?? 30_000, intervalMs: 250, procs: [this.proc], logs: [{ file: this.log, lines: 20 }] },
    );
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.proc) await this.supervisor.kill(this.proc, 'SIGTERM', 10_000);
    this.supervisor.release();
  }
}
