/**
 * The settlement stream's dead letters, for the service team: events banking or accounts refused
 * (bad signature, off-contract payload) with the reason, and a replay that puts one back on the
 * stream exactly as it was — its signature and the contract are checked again, so a forgery
 * comes straight back here, and an event refused by a since-fixed bug is applied once.
 *
 *   npm run dead-letters -- list [--json]
 *   npm run dead-letters -- replay --entry <dead-letter entry id>
 *
 * Environment: REDIS_URL (default redis://127.0.0.1:6379; a user allowed on the stream, e.g.
 * banking's), EVENTS_STREAM (default: the services' trading:oms:events or the all-in-one's
 * trading_oms:events, whichever exists; with PLATFORM_DB_PREFIX set, that all-in-one's). A stream that does not exist is said to be
 * missing, never reported as having no dead letters.
 */
import { parseArgs } from 'node:util';
import { connectEventLog, listDeadLetters, replayDeadLetter } from '@trading/events';

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { entry: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const log = await connectEventLog(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379');
  try {
    const prefix = process.env['PLATFORM_DB_PREFIX'];
    const candidates = process.env['EVENTS_STREAM']
      ? [process.env['EVENTS_STREAM']]
      : prefix !== undefined
        ? [`${prefix}oms:events`] // an all-in-one's, named by its prefix
        : ['trading:oms:events', 'trading_oms:events']; // the services' default, then the all-in-one's
    let stream: string | undefined;
    for (const name of candidates) if (!stream && (await log.lastId(name)) !== '0-0') stream = name;
    if (!stream) {
      console.error(
        `no settlement stream ${candidates.join(' or ')} on ${process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379'}: set EVENTS_STREAM (and REDIS_URL) to the platform's`,
      );
      return 1;
    }
    if (positionals[0] === 'list') {
      const dead = await listDeadLetters(log, stream);
      if (values.json)
        console.log(
          JSON.stringify(
            dead.map((d) => ({ entryId: d.entryId, eventId: d.eventId, ...d.payload })),
            null,
            2,
          ),
        );
      else
        console.log(
          dead
            .map(
              (d) =>
                `${d.entryId}  ${String(d.payload['group']).padEnd(8)} ${String(d.payload['type'])}  ${d.eventId}  ${String(d.payload['reason'])}`,
            )
            .join('\n') || `no dead letters on ${stream}`,
        );
      return 0;
    }
    if (positionals[0] === 'replay' && values.entry) {
      console.log(`replayed ${values.entry} as ${await replayDeadLetter(log, stream, values.entry)} on ${stream}`);
      return 0;
    }
    console.error('usage: dead-letters list [--json] | dead-letters replay --entry <id>');
    return 2;
  } catch (err) {
    console.error((err as Error).message);
    return 1;
  } finally {
    await log.close();
  }
}

if (require.main === module) void main().then((code) => process.exit(code));
