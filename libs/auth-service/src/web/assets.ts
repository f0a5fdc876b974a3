import { Router } from 'express';
import { WEB_SCRIPT } from './web-script.generated';

/**
 * The pages' only script and stylesheet, served as files so the CSP needs no 'unsafe-inline'.
 * Both live in TypeScript modules so every bundle (auth alone, or the all-in-one platform)
 * carries them without copying assets: the script is bundled from ./browser/dashboard.ts
 * (npm run web-assets), the stylesheet is below.
 */

const STYLES = `
:root { font-family: system-ui, sans-serif; color: #1b1f24; background: #f5f6f8; }
body { margin: 0; }
.top { display: flex; justify-content: space-between; align-items: center; padding: .75rem 1.5rem; background: #12263a; color: #fff; }
.top .brand { font-weight: 600; }
.top form { margin: 0; }
.top .who { opacity: .8; margin-right: .5rem; }
main { max-width: 72rem; margin: 1.5rem auto; padding: 0 1rem; }
.card { background: #fff; border: 1px solid #d8dce2; border-radius: 8px; padding: 1.25rem 1.5rem; margin-bottom: 1.5rem; }
.card.narrow { max-width: 26rem; margin: 3rem auto; }
h1 { font-size: 1.4rem; margin-top: 0; } h2 { font-size: 1.15rem; margin-top: 0; }
label { display: block; font-weight: 600; margin: .75rem 0 .25rem; }
input[type=text], input[type=email], input[type=password], input[type=date], textarea, select { width: 100%; box-sizing: border-box; padding: .45rem .5rem; border: 1px solid #aab2bd; border-radius: 4px; font: inherit; }
fieldset { border: 0; padding: 0; margin: .75rem 0 0; } legend { font-weight: 600; }
fieldset label { display: inline; font-weight: normal; margin-right: 1rem; }
button { margin-top: 1rem; padding: .5rem 1rem; border: 0; border-radius: 4px; background: #1f6feb; color: #fff; font: inherit; cursor: pointer; }
button.link { background: none; color: inherit; text-decoration: underline; padding: 0; margin: 0; }
button.danger { background: #c62828; margin: 0; padding: .3rem .7rem; }
button.secondary { background: #e3e6ea; color: #1b1f24; margin-left: .5rem; }
#consent img { border-radius: 8px; } #scopes li { margin: .3rem 0; }
.error { color: #b42318; min-height: 1em; margin: .25rem 0 0; font-size: .9rem; }
.alert { background: #fdecea; border: 1px solid #f5c2c0; padding: .6rem .8rem; border-radius: 4px; }
.notice { background: #e8f3ff; border: 1px solid #b6d7ff; padding: .6rem .8rem; border-radius: 4px; }
.token-once { background: #fff8e1; border: 1px solid #ffe08a; }
.token-once input { font-family: ui-monospace, monospace; }
.hint { color: #57606a; font-size: .9rem; }
table { width: 100%; border-collapse: collapse; font-size: .92rem; }
th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid #e3e6ea; vertical-align: top; }
code { font-family: ui-monospace, monospace; }
.status-ACTIVE { color: #1a7f37; } .status-REVOKED, .status-EXPIRED, .outcome-FAILURE { color: #b42318; } .outcome-SUCCESS { color: #1a7f37; }
code, td { overflow-wrap: anywhere; }
/* On a phone each table row becomes a card of labelled lines: no sideways scrolling. */
@media (max-width: 760px) {
  main { margin: 1rem auto; padding: 0 .5rem; }
  .card { padding: 1rem; }
  .top { padding: .6rem .75rem; flex-wrap: wrap; gap: .25rem; }
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; width: 100%; box-sizing: border-box; }
  table.stack tr { border: 1px solid #e3e6ea; border-radius: 6px; margin-bottom: .75rem; padding: .25rem .6rem; }
  table.stack td { display: flex; justify-content: space-between; gap: 1rem; border: 0; padding: .3rem 0; text-align: right; }
  table.stack td[data-label]::before { content: attr(data-label); font-weight: 600; text-align: left; flex: none; }
  table.stack td:empty { display: none; }
}
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
