import type { PreparedStatement } from '@trading/db';

/** The accounts table is read and written with SQL only; every read names its columns as `Account` spells them. */
export const ACCOUNT_COLUMNS = `id, user_id AS "userId", number, type, status, base_currency AS "baseCurrency", created_at AS "createdAt",
  nickname, trade_confirmation_emails AS "tradeConfirmationEmails"`;

/** A user's accounts, oldest first: read on every REST and GraphQL call that lists or checks accounts. */
export const ACCOUNTS_OF_USER: PreparedStatement = {
  name: 'accounts-of-user',
  text: `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE user_id = $1 ORDER BY created_at, number`,
};

/** One account, whoever owns it (the back office). */
export const ACCOUNT_BY_ID: PreparedStatement = {
  name: 'account-by-id',
  text: `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`,
};
