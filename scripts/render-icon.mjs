// Renders the marketplace icon (media/icon.png, 128×128) from the activity-bar glyph media/skillopt.svg:
// the glyph in white on a rounded tile. Run by hand after changing the glyph (`node scripts/render-icon.mjs`);
// the PNG is checked in so packaging needs no browser. Uses Debian's Chromium, or $CHROMIUM.
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const glyph = readFileSync(new URL('../media/skillopt.svg', import.meta.url), 'utf8')
  .replace(/width="24" height="24"/, 'width="92" height="92"')
  .replace('stroke="currentColor"', 'stroke="#ffffff"');
const html = `<!doctype html><html><body style="margin:0;background:transparent">
<div style="width:128px;height:128px;border-radius:24px;display:flex;align-items:center;justify-content:center;
background:linear-gradient(135deg,#2563eb,#7c3aed)">${glyph}</div></body></html>`;

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium' });
try {
  const page = await browser.newPage({ viewport: { width: 128, height: 128 } });
  await page.setContent(html);
  await page.screenshot({
    path: new URL('../media/icon.png', import.meta.url).pathname,
    omitBackground: true,
  });
} finally {
  await browser.close();
}
