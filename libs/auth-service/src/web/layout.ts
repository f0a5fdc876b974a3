import { html, type SafeHtml } from './html';
import { languageLink, LOCALES } from './locale';
import { LANGUAGE_NAMES, texts } from './texts';

export interface PageOptions {
  title: string;
  locale: string;
  body: SafeHtml;
  /** Shown in the header with a sign-out button when signed in. */
  user?: { email: string; csrf: string };
  /**
   * This page's path and query (`/en/signin?next=…`), for the language switcher to reload it in
   * another language; the sign-in page of that language when not given.
   */
  here?: string;
}

/** The page shell: no inline script or style anywhere, so the CSP can forbid both. */
export function layout({ title, locale, body, user, here }: PageOptions): string {
  const t = texts(locale);
  const back = here ?? `/${locale}/signin`;
  return html`<!doctype html>
<html lang="${locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${t.brand}</title>
<link rel="stylesheet" href="/assets/web.css">
<script src="/assets/web.js" defer></script>
</head>
<body>
<header class="top">
  <span class="brand">${t.brand}</span>
  <nav class="langs" aria-label="${t.language}" id="languages">${LOCALES.map((l) =>
    l === locale
      ? html`<span lang="${l}" aria-current="true">${LANGUAGE_NAMES[l]}</span>`
      : html`<a href="${languageLink(l, back)}" hreflang="${l}" lang="${l}" rel="nofollow" data-lang="${l}">${LANGUAGE_NAMES[l]}</a>`,
  )}</nav>
  ${
    user
      ? html`<form method="post" action="/${locale}/signout" class="signout">
        <input type="hidden" name="_csrf" value="${user.csrf}">
        <span class="who">${user.email}</span> <button type="submit" class="link">${t.signOut}</button>
      </form>`
      : ''
  }
</header>
<main>
${body}
</main>
</body>
</html>`.value;
}
