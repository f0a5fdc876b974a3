/** One Server-Sent Event as the order stream sends it (comments and `retry:` lines are not events). */
export interface ServerSentEvent {
  id?: string;
  event?: string;
  data?: any;
}

/** The whole events at the front of `buffer` (each ends with a blank line), and what is left after them. */
export function takeServerSentEvents(buffer: string): { events: ServerSentEvent[]; rest: string } {
  const events: ServerSentEvent[] = [];
  let end: number;
  while ((end = buffer.indexOf('\n\n')) >= 0) {
    const block = buffer.slice(0, end);
    buffer = buffer.slice(end + 2);
    const event: ServerSentEvent = {};
    for (const line of block.split('\n')) {
      const [field, ...rest] = line.split(':');
      const value = rest.join(':').replace(/^ /, '');
      if (field === 'id') event.id = value;
      else if (field === 'event') event.event = value;
      else if (field === 'data') event.data = JSON.parse(value);
    }
    if (event.event) events.push(event);
  }
  return { events, rest: buffer };
}
