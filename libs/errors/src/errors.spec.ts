import { GraphQLError } from 'graphql';
import {
  AppError,
  errors,
  fromGraphQLError,
  isUuid,
  parseUuid,
  problemFromError,
  statusForCode,
  toGraphQLError,
  wwwAuthenticate,
} from './index';

describe('error model', () => {
  it('maps every code to one HTTP status and unknown codes to 500', () => {
    expect(statusForCode('UNAUTHENTICATED')).toBe(401);
    expect(statusForCode('INSUFFICIENT_SCOPE')).toBe(403);
    expect(statusForCode('NOT_FOUND')).toBe(404);
    expect(statusForCode('SOMETHING_ELSE')).toBe(500);
    expect(statusForCode(undefined)).toBe(500);
  });

  it('renders problem+json with the field at fault and masks unexpected errors', () => {
    const p = problemFromError(errors.badInput('query.limit', 'limit must be 1..100'), 'rid-1');
    expect(p).toMatchObject({
      status: 400,
      code: 'BAD_USER_INPUT',
      field: 'query.limit',
      requestId: 'rid-1',
      detail: 'limit must be 1..100',
    });
    const masked = problemFromError(new Error('connect ECONNREFUSED 10.0.0.3:5432'), 'rid-2');
    expect(masked.status).toBe(500);
    expect(JSON.stringify(masked)).not.toContain('ECONNREFUSED');
  });

  it('round-trips through GraphQL extensions keeping code and field', () => {
    const original = new AppError('UNPROCESSABLE', 'amount has too many decimals', { field: 'amount' });
    const gql = toGraphQLError(original);
    expect(gql).toBeInstanceOf(GraphQLError);
    const back = fromGraphQLError({ message: gql.message, extensions: gql.extensions as Record<string, unknown> });
    expect(back.code).toBe('UNPROCESSABLE');
    expect(back.field).toBe('amount');
    expect(back.status).toBe(422);
  });

  it('never trusts an internal error message coming back from GraphQL', () => {
    const back = fromGraphQLError({ message: 'fetch failed http://accounts:4001', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
    expect(back.message).not.toContain('4001');
  });

  it('builds RFC 6750 challenges', () => {
    expect(wwwAuthenticate(errors.unauthenticated())).toMatch(/^Bearer .*error="invalid_token"/);
    expect(wwwAuthenticate(new AppError('UNAUTHENTICATED', 'no token', { noCredentials: true }))).toBe('Bearer realm="trading-api"');
    expect(wwwAuthenticate(errors.insufficientScope(['read:orders']))).toContain('scope="read:orders"');
  });
});

describe('ids', () => {
  it('takes any UUID, lower-cased, and refuses anything else naming the field', () => {
    expect(parseUuid('0B7E9A10-5C3D-4E2F-8A61-2B9D7C4E1A01', 'accountId')).toBe('0b7e9a10-5c3d-4e2f-8a61-2b9d7c4e1a01');
    expect(isUuid('00000000-0000-0000-0000-000000000000')).toBe(true);
    for (const bad of ['x', '0b7e9a10-5c3d-4e2f-8a61-2b9d7c4e1a0', 42, null])
      expect(() => parseUuid(bad, 'accountId')).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT', field: 'accountId' }));
  });
});
