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

/** An open `text/event-stream` response, read event by event (comments and `retry:` skipped). */
export class EventStreamReader {
  private buffer = '';
  private readonly events: ServerSentEvent[] = [];
  private done = false;

  private constructor(
    readonly status: number,
    readonly headers: Headers,
    /** The answer's body when it was not a stream (a refusal). */
    readonly body: string | undefined,
    private readonly reader: ReadableStreamDefaultReader<Uint8Array> | undefined,
    private readonly abort: AbortController,
  ) {}

  static async open(url: string, token: string, lastEventId?: string): Promise<EventStreamReader> {
    const abort = new AbortController();
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      signal: abort.signal,
    });
    if (!res.ok) return new EventStreamReader(res.status, res.headers, await res.text(), undefined, abort);
    return new EventStreamReader(res.status, res.headers, undefined, res.body!.getReader(), abort);
  }

  /** The next event (or null once the server ended the stream), within `ms`. */
  async next(ms = 10_000): Promise<ServerSentEvent | null> {
    const deadline = Date.now() + ms;
    const decoder = new TextDecoder();
    while (!this.events.length && !this.done) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no event in time');
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        this.reader!.read(),
        new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), left))),
      ]).finally(() => clearTimeout(timer));
      if (chunk === 'timeout') throw new Error('no event in time');
      if (chunk.done) this.done = true;
      else this.buffer += decoder.decode(chunk.value, { stream: true });
      const { events, rest } = takeServerSentEvents(this.buffer);
      this.buffer = rest;
      this.events.push(...events);
    }
    return this.events.shift() ?? null;
  }

  close(): void {
    this.abort.abort();
  }
}
