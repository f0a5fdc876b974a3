import { errors } from '@trading/errors';
import { accountSettingsRequest } from '../contract';
import { parseLimit } from '@trading/pagination';
import {
  ACTIVITY_TYPES,
  decodePageToken,
  mergeActivities,
  parseActivityTypes,
  SOURCE_LIMIT,
  sourceTo,
  type Activity,
  type ActivityType,
  type SourcePage,
} from './activities';
import { booleanQueryParam, jsonBody, listParams, ownAccount, queryParam, requiredQueryParam, uuidParam } from './params';
import type { RestRoute } from './route';

const ACCOUNT = 'id number type status baseCurrency createdAt nickname tradeConfirmationEmails';
const POSITION =
  'symbol quantity quantityAvailable averageCost costBasis marketPrice marketValue unrealizedPnl unrealizedPnlPercent realizedPnl dayChange dayChangePercent currency updatedAt';
const MARGIN_FIGURES = 'currency cash marketValue equity initialRequirement maintenanceRequirement excessLiquidity buyingPower';

/** Each activity type's source in the gateway operation: its alias there and its item fields. */
const SOURCES: Record<ActivityType, string> = { FILL: 'fills', DEPOSIT: 'deposits', WITHDRAWAL: 'withdrawals', FEE: 'fees' };
const CASH_ITEM = 'id amount currency transactionId description occurredAt';
const cashSource = (type: Exclude<ActivityType, 'FILL'>) => {
  const name = SOURCES[type];
  return `${name}: cashActivity(limit: ${SOURCE_LIMIT}, from: $from, to: $${name}To, type: ${type}) @include(if: $${name}) {
    nodes { ${CASH_ITEM} } nextCursor
  }`;
};

/** The page the request asks for: its size, where the previous page ended and which types. */
function activityRequest(req: Parameters<NonNullable<RestRoute['variables']>>[0]) {
  return {
    limit: parseLimit(queryParam(req, 'limit')),
    boundary: decodePageToken(queryParam(req, 'pageToken')),
    types: parseActivityTypes(queryParam(req, 'types')),
  };
}

type Connection = { nodes: Array<Record<string, unknown>>; nextCursor: string | null } | undefined;

/** The sources' answers as feed items: a trade becomes a FILL (its time is when it executed). */
function activitySources(account: Record<string, Connection>): SourcePage[] {
  return ACTIVITY_TYPES.flatMap((type) => {
    const page = account[SOURCES[type]];
    if (!page) return [];
    const items = page.nodes.map(
      ({ id, executedAt, occurredAt, ...fields }): Activity => ({
        id: String(id),
        type,
        occurredAt: String(type === 'FILL' ? executedAt : occurredAt),
        ...fields,
      }),
    );
    return [{ type, items, more: page.nextCursor !== null }];
  });
}

export const accountsRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/accounts',
    scopes: ['read:accounts'],
    document: /* GraphQL */ `
      query Accounts {
        accounts { ${ACCOUNT} }
      }
    `,
    shape: (data) => ({ accounts: data.accounts }),
  },
  {
    method: 'GET',
    path: '/accounts/:accountId',
    scopes: ['read:accounts'],
    document: /* GraphQL */ `
      query Account($accountId: ID!) {
        account(id: $accountId) { ${ACCOUNT} }
      }
    `,
    variables: (req) => ({ accountId: uuidParam(req, 'accountId') }),
    shape: (data) => ownAccount<Record<string, unknown>>(data),
  },
  {
    method: 'PATCH',
    path: '/accounts/:accountId',
    scopes: ['write:accounts'],
    document: /* GraphQL */ `
      mutation UpdateAccountSettings($accountId: ID!, $input: AccountSettingsInput!) {
        settings: updateAccountSettings(accountId: $accountId, input: $input) { accountId nickname tradeConfirmationEmails }
      }
    `,
    variables: (req) => {
      const accountId = uuidParam(req, 'accountId');
      const input = jsonBody(req, accountSettingsRequest);
      if (!Object.keys(input).length) throw errors.badInput('body', 'Give at least one of nickname, tradeConfirmationEmails');
      return { accountId, input };
    },
    shape: (data) => data.settings,
  },
  {
    method: 'GET',
    path: '/accounts/:accountId/positions',
    scopes: ['read:accounts'],
    document: /* GraphQL */ `
      query Positions($accountId: ID!, $limit: Int, $cursor: String, $includeClosed: Boolean) {
        account(id: $accountId) {
          positions(limit: $limit, cursor: $cursor, includeClosed: $includeClosed) { nodes { ${POSITION} } nextCursor }
        }
      }
    `,
    variables: (req) => {
      const { limit, cursor } = listParams(req);
      return { accountId: uuidParam(req, 'accountId'), limit, cursor, includeClosed: booleanQueryParam(req, 'includeClosed') ?? false };
    },
    shape: (data, req) => {
      const { positions } = ownAccount<{ positions: { nodes: unknown[]; nextCursor: string | null } }>(data);
      return { accountId: req.params['accountId'], positions: positions.nodes, nextCursor: positions.nextCursor };
    },
  },
  {
    method: 'GET',
    path: '/accounts/:accountId/position',
    scopes: ['read:accounts'],
    document: /* GraphQL */ `
      query Position($accountId: ID!, $symbol: String!) {
        account(id: $accountId) { position(symbol: $symbol) { ${POSITION} } }
      }
    `,
    variables: (req) => ({ accountId: uuidParam(req, 'accountId'), symbol: requiredQueryParam(req, 'symbol').toUpperCase() }),
    shape: (data, req) => {
      const { position } = ownAccount<{ position: Record<string, unknown> | null }>(data);
      if (!position) throw errors.notFound(`Position in ${String(req.query['symbol']).toUpperCase()}`, 'symbol');
      return { accountId: req.params['accountId'], ...position };
    },
  },
  {
    method: 'GET',
    path: '/accounts/:accountId/margin',
    scopes: ['read:accounts'],
    document: /* GraphQL */ `
      query Margin($accountId: ID!) {
        account(id: $accountId) { type margin { baseCurrency asOf total { ${MARGIN_FIGURES} } byCurrency { ${MARGIN_FIGURES} } } }
      }
    `,
    variables: (req) => ({ accountId: uuidParam(req, 'accountId') }),
    shape: (data, req) => {
      const account = ownAccount<{ type: string; margin: Record<string, unknown> }>(data);
      return { accountId: req.params['accountId'], accountType: account.type, ...account.margin };
    },
  },
  {
    method: 'GET',
    path: '/accounts/:accountId/portfolios',
    scopes: ['read:accounts'],
    document: /* GraphQL */ `
      query Portfolios($accountId: ID!) {
        account(id: $accountId) {
          portfolios {
            baseCurrency totalValue dayChange dayChangePercent asOf
            portfolios { currency cash marketValue totalValue totalValueInBase allocationPercent dayChange dayChangePercent positionCount }
          }
        }
      }
    `,
    variables: (req) => ({ accountId: uuidParam(req, 'accountId') }),
    shape: (data, req) => ({ accountId: req.params['accountId'], ...ownAccount<{ portfolios: Record<string, unknown> }>(data).portfolios }),
  },
  {
    method: 'GET',
    path: '/accounts/:accountId/activities',
    // Fills are the OMS's and cash movements banking's: the feed needs both read scopes.
    scopes: ['read:orders', 'read:banking'],
    document: /* GraphQL */ `
      query AccountActivities($accountId: ID!, $from: String, $fillsTo: String, $depositsTo: String, $withdrawalsTo: String,
                              $feesTo: String, $fills: Boolean!, $deposits: Boolean!, $withdrawals: Boolean!, $fees: Boolean!) {
        account(id: $accountId) {
          id
          fills: trades(limit: ${SOURCE_LIMIT}, from: $from, to: $fillsTo) @include(if: $fills) {
            nodes { id orderId symbol side quantity price grossAmount commission currency executedAt } nextCursor
          }
          ${cashSource('DEPOSIT')}
          ${cashSource('WITHDRAWAL')}
          ${cashSource('FEE')}
        }
      }
    `,
    variables: (req) => {
      const accountId = uuidParam(req, 'accountId');
      const { boundary, types } = activityRequest(req);
      const to = queryParam(req, 'to');
      const perSource = ACTIVITY_TYPES.flatMap((type) => [
        [SOURCES[type], types.includes(type)],
        [`${SOURCES[type]}To`, sourceTo(type, boundary, to)],
      ]);
      return { accountId, from: queryParam(req, 'from'), ...Object.fromEntries(perSource) };
    },
    shape: (data, req) => {
      const { limit, boundary } = activityRequest(req);
      const page = mergeActivities(activitySources(ownAccount<Record<string, Connection>>(data)), boundary, limit);
      return { accountId: req.params['accountId'], ...page };
    },
  },
];
