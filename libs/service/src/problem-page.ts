import type { Request, Response } from 'express';
import type { Problem } from '@trading/errors';
import { setPageHeaders } from './page-headers';

/**
 * The look every page for people shares (auth's pages, and the facade's answer to a browser):
 * the top bar, a card, an alert. Auth's stylesheet starts with it; other origins serve it at
 * PAGE_STYLESHEET_PATH (a file, so the page policy needs no 'unsafe-inline').
 */
export const PAGE_STYLES = `
:root { font-family: system-ui, sans-serif; color: #1b1f24; background: #f5f6f8; }
body { margin: 0; }
.top { display: flex; flex-wrap: wrap; gap: .5rem 1rem; justify-content: space-between; align-items: center; padding: .75rem 1.5rem; background: #12263a; color: #fff; }
.top .brand { font-weight: 600; margin-right: auto; }
main { max-width: 80rem; margin: 1.5rem auto; padding: 0 1rem; }
.card { background: #fff; border: 1px solid #d8dce2; border-radius: 8px; padding: 1.25rem 1.5rem; margin-bottom: 1.5rem; }
.card.narrow { max-width: 26rem; margin: 3rem auto; }
h1 { font-size: 1.4rem; margin-top: 0; } h2 { font-size: 1.15rem; margin-top: 0; }
.alert { background: #fdecea; border: 1px solid #f5c2c0; padding: .6rem .8rem; border-radius: 4px; }
.hint { color: #57606a; font-size: .9rem; }
code { font-family: ui-monospace, monospace; }
details.technical { margin: 1rem 0; color: #57606a; font-size: .9rem; } details.technical code { white-space: normal; overflow-wrap: anywhere; }
@media (max-width: 640px) {
  main { margin: 1rem auto; padding: 0 .5rem; }
  .card { padding: 1rem; }
  .top { padding: .6rem .75rem; }
}
`;

/** Where a service that answers browsers with problem pages serves PAGE_STYLES. */
export const PAGE_STYLESHEET_PATH = '/assets/page.css';

export function servePageStyles(_req: Request, res: Response): void {
  res.setHeader('Content-Type', 'text/css; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'public, max-age=300');
  res.send(PAGE_STYLES);
}

/** Where a problem page sends a person who opened an API address in a browser. */
export interface ProblemPageLinks {
  /** The interactive API documentation. */
  docs: string;
  /** The API's index ({base_url}). */
  index: string;
}

const PAGE_TEXTS = {
  en: {
    brand: 'Trading API',
    title: 'The API could not answer this request',
    intro: 'This address belongs to the Trading API, which programs call with a token. Its answer:',
    details: 'Technical details',
    meaning: 'What this error means',
    docs: 'API documentation',
    index: 'API index',
    reference: 'Reference',
  },
  de: {
    brand: 'Trading API',
    title: 'Die API konnte diese Anfrage nicht beantworten',
    intro: 'Diese Adresse gehört zur Trading API, die Programme mit einem Token aufrufen. Ihre Antwort:',
    details: 'Technische Details',
    meaning: 'Was dieser Fehler bedeutet',
    docs: 'API-Dokumentation',
    index: 'API-Übersicht',
    reference: 'Referenz',
  },
  fr: {
    brand: 'Trading API',
    title: 'L’API n’a pas pu répondre à cette requête',
    intro: 'Cette adresse appartient à la Trading API, que les programmes appellent avec un jeton. Sa réponse :',
    details: 'Détails techniques',
    meaning: 'Ce que signifie cette erreur',
    docs: 'Documentation de l’API',
    index: 'Index de l’API',
    reference: 'Référence',
  },
};
type PageLocale = keyof typeof PAGE_TEXTS;

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A browser (text/html before any JSON in Accept) rather than a program (problem+json, JSON, or anything: curl's `*\/*`). */
export const prefersPage = (req: Request) => req.accepts(['application/problem+json', 'application/json', 'text/html']) === 'text/html';

/** The problem as a small page in the browser's language (Accept-Language: en, de or fr), its exact words under the technical details. */
function problemPage(problem: Problem, locale: string, links: ProblemPageLinks): string {
  const t = PAGE_TEXTS[(locale in PAGE_TEXTS ? locale : 'en') as PageLocale];
  return `<!doctype html>
<html lang="${escape(locale)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${problem.status} ${escape(problem.title)} · ${t.brand}</title>
<link rel="stylesheet" href="${PAGE_STYLESHEET_PATH}">
</head>
<body>
<header class="top"><span class="brand">${t.brand}</span></header>
<main>
<section class="card narrow" id="problem-page" data-status="${problem.status}" data-code="${escape(problem.code)}">
<h1 id="problem-title">${t.title}</h1>
<p>${t.intro}</p>
<p class="alert" role="alert" id="problem-detail"><strong>${problem.status} ${escape(problem.title)}</strong>: ${escape(problem.detail)}</p>
<details class="technical" id="problem-technical"><summary>${t.details}</summary>
<p><code>${escape(problem.code)}${problem.field ? ` · field ${escape(problem.field)}` : ''}</code></p>
${problem.requestId ? `<p class="hint">${t.reference}: <code>${escape(problem.requestId)}</code></p>` : ''}
</details>
<ul>
<li><a id="problem-type" href="${escape(problem.type)}">${t.meaning}</a></li>
<li><a id="problem-docs" href="${escape(links.docs)}">${t.docs}</a></li>
<li><a id="problem-index" href="${escape(links.index)}">${t.index}</a></li>
</ul>
</section>
</main>
</body>
</html>`;
}

/** Sends the problem as a page, with the page headers of every page we serve; the answer depends on Accept and Accept-Language. */
export function sendProblemPage(req: Request, res: Response, problem: Problem, links: ProblemPageLinks): void {
  const locale = req.acceptsLanguages(...Object.keys(PAGE_TEXTS)) || 'en';
  setPageHeaders(res);
  res.vary('Accept').vary('Accept-Language');
  res
    .status(problem.status)
    .type('html')
    .send(problemPage(problem, locale, links));
}
