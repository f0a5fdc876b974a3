import { z } from '@trading/config';
import { DECIMAL_SYNTAX } from '@trading/money';
import { named } from './kit';

/** The DEV sandbox's request bodies: each optional field checked here for shape; the services judge the values. */
const DECIMAL_ERROR = 'must be a decimal string, e.g. "10"';
const decimalString = z.string({ error: DECIMAL_ERROR }).regex(DECIMAL_SYNTAX, DECIMAL_ERROR);
const reason = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .optional()
  .meta({ description: '1 to 200 characters, no control characters (default: Rejected by the sandbox)' });

export const sandboxFillRequest = named(
  'SandboxFillRequest',
  z.strictObject({
    quantity: decimalString.optional().meta({
      description:
        'Positive, at most the remaining quantity, in whole lots unless it is the whole remainder (default: the whole remainder)',
      examples: ['5'],
    }),
    price: decimalString.optional().meta({
      description:
        'On the tick, and one the order allows: a buy at or below its limit (and a market buy its collar), a sell at or above its limit (default: the limit price, else the current ask for a buy, the bid for a sell)',
      examples: ['189.50'],
    }),
  }),
  'A sandbox fill: how much and at what price (both optional; an unknown field is refused)',
);

export const sandboxRejectRequest = named(
  'SandboxRejectRequest',
  z.strictObject({ reason }),
  'A sandbox rejection: its reason (optional; an unknown field is refused)',
);

export const sandboxFailFundingRequest = named(
  'SandboxFailFundingRequest',
  z.strictObject({ reason }),
  'A sandbox clearing failure: its reason (optional; an unknown field is refused)',
);
