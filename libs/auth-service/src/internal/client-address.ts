import type { RequestHandler } from 'express';
import { CLIENT_ADDRESS_HEADER, type InternalClaimsVerifier } from '@trading/auth';

/**
 * On auth's internal listener, the client address is the one the facade signed for this
 * request (it decided it under its own trusted-proxy rules); without that header, the socket's
 * peer. No X-Forwarded-For is believed, so no local process can borrow another address to get
 * past a PAT's IP list or a per-address limit.
 */
export function clientAddressFromFacade(verifier: InternalClaimsVerifier): RequestHandler {
  return async (req, _res, next) => {
    const signed = await verifier.verify(req.get(CLIENT_ADDRESS_HEADER), 'client-address');
    if (signed?.caller === 'rest-facade' && signed.ip) Object.defineProperty(req, 'ip', { value: signed.ip, configurable: true });
    next();
  };
}
