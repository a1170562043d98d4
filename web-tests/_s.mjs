import { chromium } from 'playwright-core';
const [file, sel, out, w, open] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless','--no-sandbox','--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: +w || 1280, height: 900 } });
await page.goto('file://' + file);
await page.evaluate(([s, o]) => { const e = document.querySelector(s); if (o) e.querySelectorAll('details').forEach(d => d.open = true); e.scrollIntoView(); }, [sel, open]);
await page.screenshot({ path: out });
await browser.close();
