/** One REST operation, turned into OpenAPI by `operation()` in paths.ts; its schemas are the contract's (../contract). */
export type Op = {
  summary: string;
  scopes?: string[];
  params?: Array<{
    name: string;
    in: 'path' | 'query' | 'header';
    required?: boolean;
    schema: Record<string, unknown>;
    description?: string;
  }>;
  body?: string;
  /** The body may be left out altogether (then every field takes its default). */
  bodyOptional?: boolean;
  /** The success answer: a JSON schema by name, or another media type (e.g. `text/event-stream`) described in words. */
  ok: { status: number; schema: string; mediaType?: string; description?: string };
  errors?: number[];
  public?: boolean;
  /** Only a PAT session (POST /pat/login) is accepted; a vendor app's token gets 403 PAT_SESSION_REQUIRED. */
  patSessionOnly?: boolean;
};
export type Operations = Record<string, Partial<Record<'get' | 'post' | 'put' | 'patch' | 'delete', Op>>>;

export const accountId = { name: 'accountId', in: 'path' as const, required: true, schema: { type: 'string', format: 'uuid' } };
export const list = [
  { name: 'limit', in: 'query' as const, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
  { name: 'cursor', in: 'query' as const, schema: { type: 'string' }, description: '`nextCursor` of the previous page' },
  { name: 'from', in: 'query' as const, schema: { type: 'string' }, description: 'Date (YYYY-MM-DD) or RFC 3339 time, inclusive' },
  { name: 'to', in: 'query' as const, schema: { type: 'string' }, description: 'Date (inclusive, whole day) or RFC 3339 time (exclusive)' },
];
export const idempotency = (description: string) => ({
  name: 'Idempotency-Key',
  in: 'header' as const,
  schema: { type: 'string', maxLength: 255 },
  description,
});
