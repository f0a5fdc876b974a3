import type { PatAccess } from './scopes';
import type { ServiceName } from './service-identity';

/** What a verified caller is, as every service behind the edge sees it. */
export interface Claims {
  /** userId */
  sub: string;
  /** The grant or PAT session id; revocation works on it. */
  sid: string;
  kind: 'oauth' | 'pat';
  clientId?: string;
  patId?: string;
  scope: string[];
  /** PAT sessions only: READ_ONLY sessions may run queries/safe methods only. */
  access?: PatAccess;
  /** The client address the edge saw. */
  ip?: string;
  /** Behind the edge: the service that signed these claims (set by the verifier, never sent). */
  caller?: ServiceName;
}
