import { Router } from 'express';
import { PAGE_STYLES } from '@trading/service';
import { WEB_SCRIPT } from './web-script.generated';

/**
 * The pages' only script and stylesheet, served as files so the CSP needs no 'unsafe-inline'.
 * Both live in TypeScript modules so every bundle (auth alone, or the all-in-one platform)
 * carries them without copying assets: the script is bundled from ./browser/dashboard.ts
 * (npm run web-assets), the stylesheet is below.
 */

/** Table rows as cards of labelled lines (each cell's data-label), for `table` (a selector). */
const cardRules = (table: string) => `
  ${table} thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  ${table}, ${table} tr, ${table} td { display: block; box-sizing: border-box; }
  ${table} tbody { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 22rem), 1fr)); gap: .75rem; }
  ${table} tr { border: 1px solid #e3e6ea; border-radius: 6px; padding: .25rem .6rem; min-width: 0; }
  ${table} td { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: baseline; gap: .25rem 1rem; border: 0; padding: .3rem 0; text-align: right; }
  ${table} td[data-label]::before { content: attr(data-label); font-weight: 600; text-align: left; flex: 0 1 auto; max-width: 45%; white-space: normal; }
  ${table} td:empty { display: none; }`;

/** The shared look of pages for people first (libs/service), then what only auth's pages have. */
const STYLES = `${PAGE_STYLES}
.langs { display: flex; gap: .75rem; font-size: .9rem; }
.langs a { color: #cfe3ff; } .langs [aria-current] { font-weight: 600; }
.top form { margin: 0; }
.top .who { opacity: .8; margin-right: .5rem; }
label { display: block; font-weight: 600; margin: .75rem 0 .25rem; }
input[type=text], input[type=email], input[type=password], input[type=date], textarea, select { width: 100%; box-sizing: border-box; padding: .45rem .5rem; border: 1px solid #aab2bd; border-radius: 4px; font: inherit; }
fieldset { border: 0; padding: 0; margin: .75rem 0 0; } legend { font-weight: 600; }
fieldset label { display: inline; font-weight: normal; margin-right: 1rem; }
button { margin-top: 1rem; padding: .5rem 1rem; border: 0; border-radius: 4px; background: #1f6feb; color: #fff; font: inherit; cursor: pointer; }
button.link { background: none; color: inherit; text-decoration: underline; padding: 0; margin: 0; }
button.danger { background: #c62828; margin: 0; padding: .3rem .7rem; }
button.secondary { background: #e3e6ea; color: #1b1f24; margin-left: .5rem; }
#consent img { border-radius: 8px; } #scopes li { margin: .3rem 0; }
#home-links { list-style: none; padding: 0; } #home-links li { margin: 1rem 0; } #home-links .hint { margin: .2rem 0 0; }
.app-id { display: flex; gap: .9rem; align-items: center; margin-bottom: .5rem; } .app-id h1 { margin: 0; } .app-id .hint { margin: .2rem 0 0; }
.app-logo { width: 48px; height: 48px; object-fit: contain; border-radius: 8px; flex: none; }
.app-badge { display: inline-flex; align-items: center; justify-content: center; width: 48px; height: 48px; flex: none; border-radius: 8px; background: #1f6feb; color: #fff; font-weight: 700; font-size: 1.4rem; }
.app-badge.large { width: 64px; height: 64px; font-size: 1.8rem; }
.aside { margin: 1rem 0 0; font-size: .95rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; } dl.facts dd { margin: 0; }
.error { color: #b42318; min-height: 1em; margin: .25rem 0 0; font-size: .9rem; }
.notice { background: #e8f3ff; border: 1px solid #b6d7ff; padding: .6rem .8rem; border-radius: 4px; }
.token-once { background: #fff8e1; border: 1px solid #ffe08a; }
.token-once input { font-family: ui-monospace, monospace; }
table { width: 100%; border-collapse: collapse; font-size: .92rem; }
th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid #e3e6ea; vertical-align: top; }
.status-ACTIVE { color: #1a7f37; } .status-REVOKED, .status-EXPIRED, .outcome-FAILURE { color: #b42318; } .outcome-SUCCESS { color: #1a7f37; }
/* Words are never broken inside: lines wrap at spaces only, and short codes (ids, scopes, days) never wrap. */
th, td { overflow-wrap: normal; word-break: normal; hyphens: manual; }
code, .w, td.day, td[data-status], td[data-outcome] { white-space: nowrap; }
/*
 * Below the width where the token table's ten columns fit, each row becomes a card of labelled
 * lines: side by side while two fit, one per line on a phone. Wider, the page's script still
 * turns a table into cards (class "cards") if its content would not fit. Nothing scrolls sideways.
 */
@media (max-width: 1199.98px) {
${cardRules('table.stack')}
}
${cardRules('table.stack.cards')}
`;

export function assetRoutes(): Router {
  const router = Router();
  const serve = (type: string, body: string) => (_req: unknown, res: import('express').Response) => {
    res.setHeader('Content-Type', `${type}; charset=utf-8`);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.send(body);
  };
  router.get('/assets/web.js', serve('text/javascript', WEB_SCRIPT));
  router.get('/assets/web.css', serve('text/css', STYLES));
  return router;
}
