/** Refused events: where they are kept, how an operator lists and replays them. */
import type { DeliveredEvent, EventLog } from './event-log';

/** Where refused events of `stream` are kept. */
export const deadLetterStream = (stream: string) => `${stream}:dead-letter`;

/** The dead letters of `stream`, oldest first (npm run dead-letters -- list). */
export async function listDeadLetters(log: EventLog, stream: string): Promise<DeliveredEvent[]> {
  return log.range(deadLetterStream(stream), 1000);
}

/**
 * Puts a refused event back on `stream` exactly as it was (npm run dead-letters -- replay): its
 * signature and the contract are checked again, so a forgery comes straight back.
 * Returns the new entry id.
 */
export async function replayDeadLetter(log: EventLog, stream: string, entryId: string): Promise<string> {
  const dead = (await listDeadLetters(log, stream)).find((d) => d.entryId === entryId);
  if (!dead) throw new Error(`no dead letter ${entryId} on ${deadLetterStream(stream)}`);
  const { type, payload, signature } = dead.payload as { type: string; payload: string; signature: string | null };
  let original: Record<string, unknown>;
  try {
    original = JSON.parse(payload) as Record<string, unknown>;
  } catch {
    throw new Error(`dead letter ${entryId} does not hold a JSON payload; it cannot be replayed`);
  }
  return log.append(stream, { eventId: dead.eventId, type, payload: original, ...(signature ? { signature } : {}) });
}
