/**
 * A request and its answer, the body parsed when it is JSON: what the specs of this lib share.
 * Not @trading/testing: it is built on this lib, and a spec importing it would make a cycle.
 */
export async function http(method: string, url: string, options: { headers?: Record<string, string>; body?: string } = {}) {
  const res = await fetch(url, { method, headers: options.headers, body: options.body });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON (metrics) */
  }
  return { status: res.status, headers: res.headers, body };
}
