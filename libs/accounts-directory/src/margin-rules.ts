/**
 * What each account type must keep against its holdings, as a share of their market value (Reg T
 * style for MARGIN: initial 50 % and maintenance 25 % of long value; shorts initial 50 % and
 * maintenance 30 % of the short value; FINRA's 25 % is a floor that brokers raise for shorts).
 * CASH accounts borrow nothing: every rate is 100 %. The accounts subgraph values accounts with
 * these; the OMS's what-if shows an order's change to them.
 */
export const MARGIN_RULES = {
  CASH: { longInitial: '1', longMaintenance: '1', shortInitial: '1', shortMaintenance: '1' },
  MARGIN: { longInitial: '0.5', longMaintenance: '0.25', shortInitial: '0.5', shortMaintenance: '0.3' },
} as const;

/** The rules of an account type; an unknown type is held to CASH's (nothing borrowed). */
export const marginRulesOf = (accountType: string) => MARGIN_RULES[accountType === 'MARGIN' ? 'MARGIN' : 'CASH'];
