import { UsageError, type Command, type Need, type Values } from './command';

/** The access-token signing keys. */
export function keysCommand(what: string, values: Values): Command | undefined {
  switch (what) {
    case 'keys list':
      return {
        method: 'GET',
        path: '/admin/keys',
        body: {},
        print: (r) =>
          (r['keys'] as Array<Record<string, string | null>>)
            .map(
              (k) =>
                `${k['kid']}  ${k['status']!.padEnd(9)} created ${k['createdAt']}${k['retiredAt'] ? `  retired ${k['retiredAt']}` : ''}`,
            )
            .join('\n'),
      };
    case 'keys rotate':
      return {
        path: '/admin/keys/rotate',
        body: {},
        print: (r) => `new signing key ${r['kid']} is active; the previous one stays published until you retire it`,
      };
    case 'keys retire': {
      const kid = values['kid'];
      if (typeof kid !== 'string' || !kid) throw new UsageError('missing --kid (see keys list)');
      return {
        path: `/admin/keys/${encodeURIComponent(kid)}/retire`,
        body: {},
        print: (r) => `retired signing key ${r['kid']}: tokens it signed no longer verify`,
      };
    }
    default:
      return undefined;
  }
}

/** Accounts and instruments: the back office, answered by the domain services behind the admin API. */
export function backOfficeCommand(what: string, values: Values, need: Need): Command | undefined {
  const account = (a: Record<string, any>) =>
    `${a['accountId']}  ${a['number']}  ${String(a['type']).padEnd(6)}  ${a['baseCurrency']}  ${a['status']}`;
  const instrument = (i: Record<string, any>) =>
    `${String(i['symbol']).padEnd(8)}  ${i['name']}  ${i['currency']}  tick ${i['tickSize']}  lot ${i['lotSize']}  last ${i['lastPrice']}  ${i['tradable'] ? 'trading' : 'HALTED'}`;
  const optional = (key: string, flag: string) => (typeof values[flag] === 'string' ? { [key]: values[flag] } : {});
  switch (what) {
    case 'accounts open':
      return {
        path: '/admin/accounts',
        body: { email: need('email'), type: need('type'), currency: need('currency') },
        print: (r) =>
          `opened ${r['type']} account ${r['number']} in ${r['baseCurrency']} for ${r['email']}\n\n  accountId  ${r['accountId']}`,
      };
    case 'accounts list':
      return {
        method: 'GET',
        path: `/admin/accounts?email=${encodeURIComponent(need('email'))}`,
        body: {},
        print: (r) =>
          (r['accounts'] as Array<Record<string, any>>).map(account).join('\n') || `${r['email']} has no accounts yet (accounts open)`,
      };
    case 'accounts close':
      return {
        path: `/admin/accounts/${encodeURIComponent(need('account'))}/close`,
        body: {},
        print: (r) => `closed account ${r['number']} (${r['accountId']})`,
      };
    case 'instruments list':
      return {
        method: 'GET',
        path: '/admin/instruments',
        body: {},
        print: (r) => (r['instruments'] as Array<Record<string, any>>).map(instrument).join('\n') || 'no instruments yet',
      };
    case 'instruments add':
      return {
        path: '/admin/instruments',
        body: {
          symbol: need('symbol'),
          name: need('name'),
          currency: need('currency'),
          tickSize: need('tick'),
          price: need('price'),
          ...optional('lotSize', 'lot'),
          ...optional('minQuantity', 'min-quantity'),
          ...optional('maxQuantity', 'max-quantity'),
        },
        print: (r) => `listed ${r['symbol']} (${r['name']}) at ${r['lastPrice']} ${r['currency']}\n${instrument(r)}`,
      };
    case 'instruments halt':
      return {
        path: `/admin/instruments/${encodeURIComponent(need('symbol'))}/halt`,
        body: {},
        print: (r) => `${r['symbol']} is halted: new orders are refused and working orders do not fill`,
      };
    case 'instruments resume':
      return {
        path: `/admin/instruments/${encodeURIComponent(need('symbol'))}/resume`,
        body: {},
        print: (r) => `${r['symbol']} is trading again`,
      };
    default:
      return undefined;
  }
}
