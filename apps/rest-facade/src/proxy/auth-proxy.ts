import type { Request } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import type { IncomingMessage } from 'node:http';

/**
 * `/v1/oauth/*` and `/v1/pat/*` belong to the auth app; the facade passes them through. The
 * client address the facade decided on (under its own trust-proxy rules) replaces any
 * X-Forwarded-For the caller sent, so the auth app sees exactly one trusted hop.
 */
export function authProxy(authUrl: string) {
  return createProxyMiddleware<IncomingMessage>({
    target: authUrl,
    changeOrigin: false,
    pathFilter: ['/oauth/**', '/pat/**'],
    proxyTimeout: 10_000,
    on: {
      proxyReq: (proxyReq, req) => {
        proxyReq.setHeader('x-forwarded-for', (req as Request).ip ?? '');
        proxyReq.removeHeader('x-internal-claims');
      },
    },
  });
}
