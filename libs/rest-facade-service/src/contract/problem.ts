import { z } from '@trading/config';
import { named, text } from './kit';

/** What a REST operation answers when it fails (application/problem+json); the OAuth endpoints answer OAuthError (oauth.ts). */
export const problem = named(
  'Problem',
  z.object({
    type: text,
    title: text,
    status: z.int(),
    detail: text,
    code: text.meta({ examples: ['BAD_USER_INPUT', 'UNAUTHENTICATED', 'INSUFFICIENT_SCOPE', 'NOT_FOUND'] }),
    field: text.optional().meta({ description: 'The request field at fault' }),
    requestId: text.optional(),
  }),
  'RFC 9457 problem details, with a stable `code` and the `field` at fault',
);
