/** A configured URL as routes join paths to it: `https://login.example/` and `https://login.example` alike. */
export const withoutTrailingSlash = (url: string) => url.replace(/\/+$/, '');

/**
 * The path the API's own addresses live under: `/v1` of `https://api.example/v1`, '' when the API
 * sits at its host's root. Vendors call the OAuth endpoints at `{base_url}/oauth/*`; an ingress may
 * send those straight to auth's public listener, which answers them under this path too.
 */
export const apiBasePath = (apiUrl: string) => withoutTrailingSlash(new URL(apiUrl).pathname);
