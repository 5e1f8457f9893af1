/** A recorder in the dashboard page: what the chart's last point and the countdown showed, and when (the page's own clock). */
import type { Page } from 'playwright-core';

/** What the page's recorder saw of the chart's last point (weights by cluster) and of the countdown. */
export interface PageRecord {
  chart: { at: number; weights: Record<string, number> }[];
  /** Each time the countdown counted down to (its zero, epoch ms), with when it was first shown. */
  dues: Record<string, number>;
}

/** Installs a recorder in the page: every change of the chart's last point and each time the countdown counts down to. */
export async function recordPage(page: Page): Promise<void> {
  await page.evaluate(`(() => {
    const rec = { chart: [], dues: {} };
    window.__rec = rec;
    let lastKey = '';
    const look = () => {
      const svg = document.querySelector('[data-testid=rollout-chart]');
      if (svg) {
        const w = {};
        const a = svg.getAttribute('data-active-cluster'), p = svg.getAttribute('data-pending-cluster');
        const aw = Number(svg.getAttribute('data-active-weight')), pw = Number(svg.getAttribute('data-pending-weight'));
        if (a && aw > 0) w[a] = aw;
        if (p && pw > 0) w[p] = pw;
        const key = JSON.stringify(w);
        if (key !== lastKey && svg.hasAttribute('data-active-weight')) { lastKey = key; rec.chart.push({ at: Date.now(), weights: w }); }
      }
      const c = document.querySelector('[data-testid=countdown][data-due]');
      if (c && !(c.getAttribute('data-due') in rec.dues)) rec.dues[c.getAttribute('data-due')] = Date.now();
    };
    new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    look();
  })()`);
}

/** What the recorder installed by `recordPage` saw so far. */
export async function pageRecord(page: Page): Promise<PageRecord> {
  return (await page.evaluate('window.__rec')) as PageRecord;
}
