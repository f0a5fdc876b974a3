import { AppError, errors, isUuid } from '@trading/errors';

/**
 * The account activity feed: fills (the OMS's trades) and the cash movements banking books on
 * their own (deposits, withdrawals, commissions), merged newest first into one list.
 *
 * Feed order: newest first; at the same millisecond by type in ACTIVITY_TYPES order, then by id
 * descending. The page token is the (time, type, id) of the last item served; the next page is
 * everything strictly after it in that order, so items sharing a timestamp are neither skipped
 * nor repeated.
 */
export const ACTIVITY_TYPES = ['FILL', 'DEPOSIT', 'WITHDRAWAL', 'FEE'] as const;
export type ActivityType = (typeof ACTIVITY_TYPES)[number];

/** How many rows each source is asked for, whatever the page size (the most a list gives). */
export const SOURCE_LIMIT = 100;

export interface ActivityKey {
  id: string;
  type: ActivityType;
  occurredAt: string;
}
export type Activity = ActivityKey & Record<string, unknown>;

/** One source's answer, already turned into feed items. `more`: it holds rows older than these. */
export interface SourcePage {
  type: ActivityType;
  items: Activity[];
  more: boolean;
}

const rank = (type: ActivityType) => ACTIVITY_TYPES.indexOf(type);

/** Negative when `a` comes first in the feed. */
export function compareActivities(a: ActivityKey, b: ActivityKey): number {
  const byTime = Date.parse(b.occurredAt) - Date.parse(a.occurredAt);
  if (byTime !== 0) return byTime;
  if (a.type !== b.type) return rank(a.type) - rank(b.type);
  return a.id === b.id ? 0 : a.id < b.id ? 1 : -1;
}

const MILLISECOND_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function encodePageToken(last: ActivityKey): string {
  return Buffer.from(JSON.stringify({ t: last.occurredAt, k: last.type, i: last.id })).toString('base64url');
}

const badToken = () => errors.badInput('pageToken', 'pageToken is not a token this list returned');

/** The token's JSON object, or null when it is not one. */
function tokenObject(token: string): Record<string, unknown> | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(token)) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const isMillisecondTime = (t: unknown): t is string =>
  typeof t === 'string' && MILLISECOND_TIME.test(t) && !Number.isNaN(Date.parse(t)) && new Date(t).toISOString() === t;
const isActivityType = (k: unknown): k is ActivityType => typeof k === 'string' && (ACTIVITY_TYPES as readonly string[]).includes(k);

/** The position a token names; anything but a token this feed gave out is a 400 naming `pageToken`. */
export function decodePageToken(token: string | undefined): ActivityKey | null {
  if (token === undefined) return null;
  const { t, k, i } = tokenObject(token) ?? {};
  if (!isMillisecondTime(t) || !isActivityType(k) || typeof i !== 'string' || !isUuid(i)) throw badToken();
  const key: ActivityKey = { occurredAt: t, type: k, id: i };
  // Only the exact spelling this feed writes (these keys, in this order, nothing else): the same
  // position spelt otherwise is not one of its tokens.
  if (encodePageToken(key) !== token) throw badToken();
  return key;
}

/**
 * The `to` bound a source of `type` is asked with after `boundary`. The sources' `to` is
 * exclusive, so a type listed after the boundary's at its millisecond (or the boundary's own
 * type) is asked up to one millisecond later and what was already served is filtered out; a type
 * listed before it was served in full at that millisecond and is asked strictly before it.
 */
export function sourceTo(type: ActivityType, boundary: ActivityKey | null, to: string | undefined): string | undefined {
  if (!boundary) return to;
  const at = Date.parse(boundary.occurredAt);
  return new Date(rank(type) < rank(boundary.type) ? at : at + 1).toISOString();
}

/**
 * Where a source that holds more rows than it sent stops being trustworthy: its unsent rows are
 * no newer than the oldest it sent, and at that millisecond they may sort anywhere among the
 * type's items, so nothing from that point of the feed on is served from this answer.
 */
function frontier(source: SourcePage): ActivityKey | null {
  const oldest = source.items[source.items.length - 1];
  if (!source.more || !oldest) return null;
  return { occurredAt: oldest.occurredAt, type: source.type, id: '\uffff' };
}

/** One page: up to `limit` items strictly after `boundary`, newest first, and the token for the rest (null at the end). */
export function mergeActivities(
  sources: SourcePage[],
  boundary: ActivityKey | null,
  limit: number,
): { activities: Activity[]; nextPageToken: string | null } {
  const candidates = sources
    .flatMap((s) => s.items)
    .filter((a) => !boundary || compareActivities(a, boundary) > 0)
    .sort(compareActivities);
  const frontiers = sources.map(frontier).filter((f): f is ActivityKey => f !== null);
  const safe = candidates.filter((a) => frontiers.every((f) => compareActivities(a, f) < 0));
  const more = safe.length > limit || sources.some((s) => s.more);
  const activities = safe.slice(0, limit);
  const last = activities[activities.length - 1];
  if (more && !last)
    throw new AppError('UNPROCESSABLE', `More than ${SOURCE_LIMIT} entries of one type share this moment; the feed cannot page past them`, {
      field: 'pageToken',
    });
  return { activities, nextPageToken: more && last ? encodePageToken(last) : null };
}

/** `types=FILL,DEPOSIT`: the types to list (all when absent); an unknown one is a 400 naming `types`. */
export function parseActivityTypes(raw: string | undefined): ActivityType[] {
  if (raw === undefined) return [...ACTIVITY_TYPES];
  const types = raw.split(',');
  if (types.some((t) => !(ACTIVITY_TYPES as readonly string[]).includes(t)))
    throw errors.badInput('types', `types must list one or more of ${ACTIVITY_TYPES.join(', ')}, separated by commas`);
  return [...new Set(types as ActivityType[])];
}
