/** A configured URL as routes join paths to it: `https://login.example/` and `https://login.example` alike. */
export const withoutTrailingSlash = (url: string) => url.replace(/\/+$/, '');
