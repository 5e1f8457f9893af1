/**
 * One RayService's rollout, live over the watch stream: the chart (observed history solid, the
 * plan's projection dashed, analysis verdicts marked; under it the plan's dip, if it has one) beside
 * the metric analysis, the countdown to the next traffic step, both clusters' weights, capacities
 * and replicas, conditions, the Kubernetes events, the last stop and steering record, and the
 * steering buttons (enabled when the verb applies and the viewer may use it).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  ApiError,
  STEERING_VERBS,
  getRayService,
  planRayService,
  steer,
  steeringPermissions,
  watchUpgrade,
  type RayServiceJson,
  type SteeringVerb,
  type UpgradePlanJson,
  type UpgradeStatusJson,
  type WatchState,
} from '../api';
import { verdictMarks } from '../analysis';
import { AnalysisPanel } from '../components/AnalysisPanel';
import { EventsPanel } from '../components/EventsPanel';
import { RolloutChart } from '../components/RolloutChart';
import { Bar, ColumnHeadings, Conditions, Countdown, PhaseBadge } from '../components/small';
import { inFlight, lastSteering, ownerText, planDipText, projection, replicasText, sampleOf, timeOf, verbLabel, verbRefusal, type Sample } from '../model';
import { historyOf, record } from '../store';

const VERB_HELP: Record<SteeringVerb, string> = {
  pause: 'Hold the upgrade before its next step.',
  resume: 'Let a paused upgrade continue.',
  promote: 'Finish the upgrade without waiting for the remaining intervals.',
  abort: 'Roll the upgrade back and reject its spec until the spec changes.',
  rollback: 'Revert the spec to the serving cluster’s, which rolls the upgrade back.',
  'retry-analysis': 'Measure the failed analysis run that holds the upgrade again, from now.',
  'skip-analysis': 'Count the failed analysis run that holds the upgrade as passed, so the upgrade goes on.',
};
/** Verbs that undo or override a safeguard: they ask for confirmation and look dangerous. */
const CONFIRM: Partial<Record<SteeringVerb, string>> = {
  abort: 'Abort the upgrade? Traffic and capacity return to the active cluster.',
  rollback: 'Roll back? The spec is reverted to the serving cluster’s.',
  'skip-analysis': 'Skip the failed analysis? The run counts as passed and the upgrade goes on.',
};
/** How often the chart's time axis advances, ms. */
const CHART_TICK_MS = 1_000;

/** Reasons of the operator that stop a rollout (a hold or an end without the new spec), shown as the last stop. */
const STOP_REASONS = /^(Paused|AnalysisFailed|Aborted|RollbackComplete|RollbackDeadlineExceeded|ProgressDeadlineExceeded|SurgeUnschedulable|InsufficientCapacity|ValidationFailed)$/;

/** The rollout page of `namespace/name`. */
export function RolloutPage({ namespace, name }: { namespace: string; name: string }) {
  const key = `${namespace}/${name}`;
  const [svc, setSvc] = useState<RayServiceJson | undefined>();
  const [status, setStatus] = useState<UpgradeStatusJson | undefined>();
  const [history, setHistory] = useState<Sample[]>(() => historyOf(key));
  const [plan, setPlan] = useState<UpgradePlanJson | undefined>();
  const [allowed, setAllowed] = useState<Record<SteeringVerb, boolean> | undefined>();
  const [watch, setWatch] = useState<{ state: WatchState; error?: string }>({ state: 'connecting' });
  const [loadError, setLoadError] = useState<string | undefined>();
  const [busy, setBusy] = useState<SteeringVerb | undefined>();
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | undefined>();
  const [lastStop, setLastStop] = useState<{ reason: string; at: number } | undefined>();
  const [now, setNow] = useState(Date.now());
  /** Status events the watch has delivered: a steering answer older than the latest of them is not shown. */
  const watchEvents = useRef(0);
  const generation = status?.generation;

  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), CHART_TICK_MS);
    return () => clearInterval(t);
  }, []);

  // The service (spec, annotations) again whenever its generation moves or an upgrade starts or ends.
  const upgrading = inFlight(status);
  useEffect(() => {
    let stale = false;
    getRayService(namespace, name).then(
      (s) => {
        if (stale) return;
        setSvc(s);
        setLoadError(undefined);
      },
      (e: unknown) => !stale && setLoadError(e instanceof ApiError ? e.message : 'loading failed'),
    );
    return () => {
      stale = true;
    };
  }, [namespace, name, generation, upgrading, status?.paused]);

  useEffect(() => {
    if (!upgrading) return setPlan(undefined);
    let stale = false;
    planRayService(namespace, name).then(
      (p) => !stale && setPlan(p),
      () => !stale && setPlan(undefined),
    );
    return () => {
      stale = true;
    };
  }, [namespace, name, generation, upgrading]);

  // The viewer's steering rights, asked once the watch is live (again, until an answer comes).
  const live = watch.state === 'live';
  useEffect(() => {
    if (!live || allowed) return undefined;
    let stale = false;
    steeringPermissions(namespace, name).then(
      (a) => !stale && setAllowed(a),
      () => undefined, // asked again at the next reconnection
    );
    return () => {
      stale = true;
    };
  }, [namespace, name, live, allowed]);

  useEffect(
    () =>
      watchUpgrade(namespace, name, {
        onEvent(e) {
          if (!e.status || e.type === 'UPGRADE_EVENT_TYPE_HEARTBEAT') return;
          const u = e.status;
          watchEvents.current++;
          setStatus(u);
          setHistory(record(key, sampleOf(u, Date.now())));
          if (u.reason && STOP_REASONS.test(u.reason)) setLastStop((prev) => (prev?.reason === u.reason ? prev : { reason: u.reason!, at: Date.now() }));
        },
        onState(state, error) {
          setWatch({ state, error: error?.message });
        },
      }),
    [namespace, name],
  );

  const act = async (verb: SteeringVerb) => {
    if (CONFIRM[verb] && !confirm(CONFIRM[verb])) return;
    setBusy(verb);
    setOutcome(undefined);
    try {
      const seen = watchEvents.current;
      const u = await steer(namespace, name, verb, `from the dashboard`);
      // The answer is the object as the steering write left it. The watch delivers that write too, and
      // an event that arrived while the answer travelled may already be newer (the operator's Paused):
      // showing the answer then would take the page back to a state that no later event corrects.
      if (watchEvents.current === seen) setStatus(u);
      setOutcome({ ok: true, text: `${verbLabel(verb)} accepted.` });
    } catch (e) {
      setOutcome({ ok: false, text: `${verb} refused: ${e instanceof ApiError ? e.message : 'the request failed'}` });
    } finally {
      setBusy(undefined);
    }
  };

  const current = history[history.length - 1];
  const anchor = timeOf(status?.active?.lastTrafficMigratedTime) ?? now;
  const projected = current && upgrading && status?.phase !== 'UPGRADE_PHASE_ROLLING_BACK' ? projection(plan, current, Math.min(anchor, now)) : [];
  // When the next traffic step is due: the server's reading of the operator's state, as `rayshift status` shows it.
  const due = timeOf(status?.nextTrafficStepTime);
  const steering = lastSteering(svc);
  const analysis = status?.analysis;
  const dip = planDipText(plan);
  const owner = ownerText(status);

  return (
    <main id="main" tabIndex={-1}>
      <p class="crumbs">
        <a href="#/">Rollouts</a> › RayService {namespace}
      </p>
      <h1>
        {name} <PhaseBadge phase={status?.phase} />
      </h1>
      <p class={`connection conn-${watch.state}`} role="status" data-testid="watch-state" data-state={watch.state}>
        {watch.state === 'live' ? 'Live' : watch.state === 'connecting' ? 'Connecting…' : `Reconnecting… ${watch.error ?? ''}`}
      </p>
      {loadError && (
        <p class="error" role="alert">
          {loadError}
        </p>
      )}
      <p class="message">
        {status?.reason && <strong>{status.reason}</strong>} {status?.message}
        {status && status.totalSteps ? ` — traffic step ${status.step ?? 0} of ${status.totalSteps}` : ''}
      </p>
      {owner && (
        <p class="owner" data-testid="owner">
          Worked on by {owner}
        </p>
      )}
      <div class="rollout-grid">
        <section aria-labelledby="chart-heading" class={analysis ? 'panel' : 'panel wide'}>
          <h2 id="chart-heading">Traffic and capacity</h2>
          <RolloutChart history={history} projection={projected} now={now} clusters={{ active: status?.active?.cluster, pending: status?.pending?.cluster }} verdicts={verdictMarks(analysis)} />
          {dip && (
            <p class="small" data-testid="plan-dip">
              Plan: {dip}
            </p>
          )}
        </section>
        {analysis && (
          <section aria-labelledby="analysis-heading" class="panel">
            <h2 id="analysis-heading">Metric analysis</h2>
            <AnalysisPanel analysis={analysis} />
          </section>
        )}
        <section aria-labelledby="clusters-heading" class="panel">
          <h2 id="clusters-heading">Clusters</h2>
          <table class="clusters">
            <ColumnHeadings names={['Side', 'RayCluster', 'Traffic', 'Target capacity', 'Replicas (ready/target)']} />
            <tbody>
              {(['active', 'pending'] as const).map((side) => {
                const c = status?.[side];
                if (!c?.cluster) return null;
                return (
                  <tr key={side} class={`series-${side}`}>
                    <th scope="row">{side}</th>
                    <td>{c.cluster}</td>
                    <td>
                      <Bar value={c.trafficRoutedPercent ?? 0} max={100} label={`${side} traffic weight`} className={`series-${side}`} /> {c.trafficRoutedPercent ?? 0}%
                    </td>
                    <td>
                      <Bar value={c.targetCapacity ?? 0} max={100} label={`${side} target capacity`} className={`series-${side}`} /> {c.targetCapacity ?? 0}%
                    </td>
                    <td data-testid={`replicas-${side}`}>{replicasText(c)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <Countdown due={due} />
        </section>
        <section aria-labelledby="steer-heading" class="panel">
          <h2 id="steer-heading">Steering</h2>
          <div class="buttons" role="group" aria-label="Steering verbs">
            {STEERING_VERBS.map((verb) => {
              const permitted = allowed?.[verb] ?? false;
              const refusal = verbRefusal(verb, status);
              const applies = refusal === undefined;
              const why = !allowed ? 'Checking your permissions…' : !permitted ? 'You may not use this verb here.' : !applies ? `Does not apply now: ${refusal}.` : VERB_HELP[verb];
              return (
                <span key={verb} class="verb">
                  <button type="button" class={CONFIRM[verb] ? 'danger' : ''} disabled={!permitted || !applies || busy !== undefined} aria-describedby={`why-${verb}`} data-testid={`steer-${verb}`} onClick={() => void act(verb)}>
                    {busy === verb ? `${verbLabel(verb)}…` : verbLabel(verb)}
                  </button>
                  <span id={`why-${verb}`} class="sr-only">
                    {why}
                  </span>
                </span>
              );
            })}
          </div>
          {allowed && STEERING_VERBS.every((v) => !allowed[v]) && <p class="muted small">You may watch this rollout but not steer it.</p>}
          <p role="status" class={outcome?.ok === false ? 'error' : 'ok'} data-testid="steer-outcome">
            {outcome?.text ?? ''}
          </p>
          <h3>Last stop</h3>
          <p data-testid="last-stop">{lastStop ? `${lastStop.reason} (seen ${new Date(lastStop.at).toLocaleTimeString()})` : 'None seen on this page.'}</p>
          {status?.lastError && <p class="error">{status.lastError}</p>}
          <h3>Last steering</h3>
          <p>{steering ? `${steering.verb} by ${steering.user}${steering.reason ? ` (“${steering.reason}”)` : ''} at ${new Date(steering.time).toLocaleString()}` : 'None recorded.'}</p>
        </section>
        <section aria-labelledby="cond-heading" class="panel wide">
          <h2 id="cond-heading">Conditions</h2>
          <Conditions status={status} />
        </section>
        <section aria-labelledby="events-heading" class="panel wide">
          <h2 id="events-heading">Kubernetes events</h2>
          <EventsPanel namespace={namespace} name={name} refreshKey={status?.resourceVersion} />
        </section>
      </div>
    </main>
  );
}
