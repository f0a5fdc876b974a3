import { errors } from '@trading/errors';

/** What an owner may change on an account; a field left out keeps its value. */
interface SettingsChange {
  /** null clears it. */
  nickname?: string | null;
  tradeConfirmationEmails?: boolean;
}

const SETTINGS = ['nickname', 'tradeConfirmationEmails'] as const;
const NICKNAME_MAX = 64;
// Line breaks, tabs and other control characters would break statements and lists that show the nickname.
const CONTROL = /\p{Cc}/u;

/**
 * The change as the API accepts it: only known fields, at least one; a nickname trimmed (and in
 * NFC, so the same name typed on two keyboards is stored the same) and then 1 to 64 characters;
 * tradeConfirmationEmails a boolean. Each failure is BAD_USER_INPUT naming the field.
 */
export function parseSettingsChange(input: unknown): SettingsChange {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw errors.badInput('input', 'input must be an object');
  const unknown = Object.keys(input).find((key) => !(SETTINGS as readonly string[]).includes(key));
  if (unknown !== undefined) throw errors.badInput(unknown, `Unknown setting ${JSON.stringify(unknown.slice(0, 40))}`);
  const given = input as Record<string, unknown>;
  const change: SettingsChange = {};
  if ('nickname' in given) change.nickname = parseNickname(given['nickname']);
  if ('tradeConfirmationEmails' in given) {
    if (typeof given['tradeConfirmationEmails'] !== 'boolean')
      throw errors.badInput('tradeConfirmationEmails', 'tradeConfirmationEmails must be true or false');
    change.tradeConfirmationEmails = given['tradeConfirmationEmails'];
  }
  if (!Object.keys(change).length) throw errors.badInput('input', `Give at least one of ${SETTINGS.join(', ')}`);
  return change;
}

function parseNickname(value: unknown): string | null {
  if (value === null) return null;
  if (typeof value !== 'string') throw errors.badInput('nickname', 'nickname must be a string, or null to clear it');
  const nickname = value.trim().normalize('NFC');
  const length = [...nickname].length; // characters as PostgreSQL counts them (code points), not UTF-16 units
  if (length < 1 || length > NICKNAME_MAX)
    throw errors.badInput('nickname', `nickname must be 1 to ${NICKNAME_MAX} characters once trimmed (null clears it)`);
  if (CONTROL.test(nickname)) throw errors.badInput('nickname', 'nickname must not contain control characters');
  return nickname;
}
