import { html } from './html';
import { layout } from './layout';
import { dashboardPath } from './signin.routes';
import { texts } from './texts';

export interface HomeView {
  locale: string;
  /** The API docs (Swagger UI at {base_url}'s origin), absolute. */
  docsUrl: string;
  /** Signed in: the header names the user and the page leads to the dashboard, not the sign-in. */
  user?: { email: string; csrf: string };
}

/** The login origin's front page: where a person goes from here (sign-in, the dashboard, the API docs). */
export function homePage(view: HomeView): string {
  const t = texts(view.locale);
  const x = t.home;
  return layout({
    title: x.title,
    locale: view.locale,
    user: view.user,
    here: `/${view.locale}/`,
    body: html`<section class="card narrow" id="home">
  <h1>${t.brand}</h1>
  <p>${x.lead}</p>
  <ul id="home-links">
    ${view.user ? '' : html`<li><a href="/${view.locale}/signin" id="home-signin">${x.signIn}</a><p class="hint">${x.signInHint}</p></li>`}
    <li><a href="${dashboardPath(view.locale)}" id="home-dashboard">${x.dashboard}</a><p class="hint">${x.dashboardHint}</p></li>
    <li><a href="${view.docsUrl}" id="home-docs">${x.docs}</a><p class="hint">${x.docsHint}</p></li>
  </ul>
</section>`,
  });
}
