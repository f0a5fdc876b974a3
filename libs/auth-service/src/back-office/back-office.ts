import { BACK_OFFICE_SUBJECT, INTERNAL_BACK_OFFICE_SCOPE, InternalClaimsSigner, type Claims, type ServiceKey } from '@trading/auth';
import { InternalClient } from '@trading/internal-http';

/** The service team acting, as every domain's back-office API expects it (auth's own key, scope internal:back-office). */
const BACK_OFFICE: Claims = { sub: BACK_OFFICE_SUBJECT, sid: BACK_OFFICE_SUBJECT, kind: 'pat', scope: [INTERNAL_BACK_OFFICE_SCOPE] };

export interface BackOfficeUrls {
  ACCOUNTS_INTERNAL_URL: string;
  BANKING_INTERNAL_URL: string;
  OMS_INTERNAL_URL: string;
}

type Query = Record<string, string | undefined>;

/** The domains' internal back-office APIs, each owning its data: accounts, banking, the OMS. */
export class BackOffice {
  private readonly accounts: InternalClient;
  private readonly banking: InternalClient;
  private readonly oms: InternalClient;

  constructor(urls: BackOfficeUrls, key: ServiceKey) {
    const signer = new InternalClaimsSigner(key);
    this.accounts = new InternalClient(urls.ACCOUNTS_INTERNAL_URL, 'accounts', signer, { connections: 2 });
    this.banking = new InternalClient(urls.BANKING_INTERNAL_URL, 'banking', signer, { connections: 2 });
    this.oms = new InternalClient(urls.OMS_INTERNAL_URL, 'oms', signer, { connections: 2 });
  }

  get<T>(service: 'accounts' | 'banking' | 'oms', path: string, query?: Query): Promise<T> {
    return this[service].get<T>(`/internal/back-office${path}`, { claims: BACK_OFFICE, query });
  }

  post<T>(service: 'accounts' | 'banking' | 'oms', path: string, body: unknown = {}): Promise<T> {
    return this[service].post<T>(`/internal/back-office${path}`, { claims: BACK_OFFICE, body });
  }

  async close(): Promise<void> {
    await Promise.all([this.accounts.close(), this.banking.close(), this.oms.close()]);
  }
}
