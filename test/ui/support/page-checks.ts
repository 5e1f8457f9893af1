/** Checks of a dashboard page in the browser: a screenshot that is a real page, keyboard reach, and an accessibility scan. */
import type { Browser, Page } from 'playwright-core';
import { axeScan, screenshot } from './ui-env';

/** Checks a screenshot is a real page: big enough, many colours, a fair share not background. */
export async function checkScreenshot(browser: Browser, page: Page, name: string): Promise<void> {
  const shot = await screenshot(browser, page, name);
  expect(shot.bytes).toBeGreaterThan(20_000);
  expect(shot.stats.width).toBeGreaterThanOrEqual(1000);
  expect(shot.stats.colours).toBeGreaterThan(20);
  expect(shot.stats.inked).toBeGreaterThan(0.01);
}

/** Presses Tab until the element with `testId` has the focus (it must be reachable by keyboard). */
export async function tabTo(page: Page, testId: string): Promise<void> {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    if ((await page.evaluate('document.activeElement && document.activeElement.getAttribute("data-testid")')) === testId) return;
  }
  throw new Error(`${testId} cannot be reached with the Tab key`);
}

/** Checks an axe-core scan of the page finds no serious or critical violation. */
export async function checkAccessibility(page: Page): Promise<void> {
  const violations = await axeScan(page);
  expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
}
