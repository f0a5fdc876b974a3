import { html, type SafeHtml } from './html';

export interface PageOptions {
  title: string;
  locale: string;
  body: SafeHtml;
  /** Shown in the header with a sign-out button when signed in. */
  user?: { email: string; csrf: string };
}

/** The page shell: no inline script or style anywhere, so the CSP can forbid both. */
export function layout({ title, locale, body, user }: PageOptions): string {
  return html`<!doctype html>
<html lang="${locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Trading API</title>
<link rel="stylesheet" href="/assets/web.css">
<script src="/assets/web.js" defer></script>
</head>
<body>
<header class="top">
  <span class="brand">Trading API · Developer</span>
  ${
    user
      ? html`<form method="post" action="/${locale}/signout" class="signout">
        <input type="hidden" name="_csrf" value="${user.csrf}">
        <span class="who">${user.email}</span> <button type="submit" class="link">Sign out</button>
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
