import { Router } from 'express';

/**
 * The pages' only script and stylesheet, served as files so the CSP needs no 'unsafe-inline'.
 * They live in TypeScript strings so every bundle (auth alone, or the all-in-one platform)
 * carries them without copying assets.
 */
const SCRIPT = String.raw`'use strict';
(function () {
  // Copy buttons: data-copy="<id of the element holding the text>".
  document.querySelectorAll('[data-copy]').forEach(function (button) {
    button.addEventListener('click', function () {
      var source = document.getElementById(button.getAttribute('data-copy'));
      var text = source.value !== undefined ? source.value : source.textContent;
      var done = function () { button.textContent = 'Copied'; button.setAttribute('data-copied', 'true'); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () { fallback(source); done(); });
      } else { fallback(source); done(); }
    });
  });
  function fallback(source) { source.focus(); source.select(); document.execCommand('copy'); }

  // Confirmation before destructive forms: data-confirm="question".
  document.querySelectorAll('form[data-confirm]').forEach(function (form) {
    form.addEventListener('submit', function (event) {
      if (!window.confirm(form.getAttribute('data-confirm'))) event.preventDefault();
    });
  });

  // Validation in the page, the same rules the server applies again, each message naming its field.
  function isIpv4(a) { return /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(a); }
  function isIpv6(a) {
    if (!/^[0-9A-Fa-f:.]+$/.test(a) || a.indexOf(':') < 0) return false;
    try { new URL('http://[' + a + ']/'); return true; } catch (e) { return false; }
  }
  function isIpOrCidr(entry) {
    var parts = entry.split('/');
    if (parts.length > 2) return false;
    var v4 = isIpv4(parts[0]), v6 = !v4 && isIpv6(parts[0]);
    if (!v4 && !v6) return false;
    if (parts.length === 1) return true;
    return /^\d{1,3}$/.test(parts[1]) && Number(parts[1]) <= (v4 ? 32 : 128);
  }
  var rules = {
    name: function (v) { v = v.trim(); return !v ? 'name is required' : v.length > 100 ? 'name must be at most 100 characters' : ''; },
    expires: function (v, input) {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(v)) return 'expires must be a date';
      if (input.min && v < input.min) return 'expires must not be in the past';
      if (input.max && v > input.max) return 'expires must be at most one year from today (' + input.max + ')';
      return '';
    },
    scope: function (v) { return v === 'READ_ONLY' || v === 'READ_WRITE' ? '' : 'scope must be READ_ONLY or READ_WRITE'; },
    ips: function (v) {
      var bad = v.split(/[\s,]+/).filter(Boolean).filter(function (e) { return !isIpOrCidr(e); })[0];
      return bad ? 'ips: "' + bad + '" is not an IPv4/IPv6 address or CIDR range' : '';
    },
    email: function (v) { return /^[^\s@]+@[^\s@]+$/.test(v.trim()) ? '' : 'email must be an e-mail address'; },
    password: function (v) { return v ? '' : 'password is required'; }
  };
  document.querySelectorAll('form[data-validate]').forEach(function (form) {
    form.addEventListener('submit', function (event) {
      var firstBad = null;
      Object.keys(rules).forEach(function (name) {
        var field = form.elements[name];
        if (!field) return;
        var input = field.length && !field.tagName ? field[0] : field;
        var value = field.value !== undefined ? field.value : '';
        var message = rules[name](value, input);
        var slot = form.querySelector('[data-error-for="' + name + '"]');
        if (slot) slot.textContent = message;
        if (input.setAttribute) input.setAttribute('aria-invalid', message ? 'true' : 'false');
        if (message && !firstBad) firstBad = input;
      });
      if (firstBad) { event.preventDefault(); if (firstBad.focus) firstBad.focus(); }
    });
  });
})();
`;

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
  router.get('/assets/web.js', serve('text/javascript', SCRIPT));
  router.get('/assets/web.css', serve('text/css', STYLES));
  return router;
}
