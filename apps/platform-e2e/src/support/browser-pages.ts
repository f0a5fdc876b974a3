import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's chromium (tools/ci/provision.sh installs it); never a downloaded browser build. */
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A headless Chromium with a fresh profile of its own. */
export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: FLAGS });

/** The two widths the pages for people are tried at: a phone and a laptop. */
export const WIDTHS = [375, 1280] as const;

/** Screenshots land in the OS temp folder (…/trading-api-screens/<name>-<width>.png) for a person to look at. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const dir = join(tmpdir(), 'trading-api-screens');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}-${page.viewportSize()?.width ?? 0}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Nothing on the page is wider than the window (no sideways scrolling). */
export const fitsWidth = (page: Page) => page.evaluate('document.documentElement.scrollWidth <= window.innerWidth') as Promise<boolean>;

/**
 * In the page: every word of every table cell (header and body) lies on one line — its
 * characters' boxes (Range.getClientRects) share one line top — and no cell's content is wider
 * than the cell. Returns the words split across lines and the cells that overflow.
 */
export const MEASURE_TABLE_WORDS = `(() => {
  const broken = [];
  const overflowing = [];
  for (const cell of document.querySelectorAll('table td, table th')) {
    // A header row hidden for sight (cards show each cell's label instead) is read by screen readers only.
    const head = cell.closest('thead');
    if (cell.getClientRects().length === 0 || (head && head.getBoundingClientRect().width <= 1)) continue;
    if (cell.scrollWidth > cell.clientWidth + 1) overflowing.push(cell.textContent.trim());
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.textContent.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (tops.size > 1) broken.push(m[0]);
      }
    }
  }
  return { broken, overflowing, fits: document.documentElement.scrollWidth <= window.innerWidth };
})()`;
