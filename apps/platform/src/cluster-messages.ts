/** What the all-in-one's primary and its workers say to each other over the cluster's IPC channel. */
import type { StartedPlatform } from './banner';

/** What the primary tells a worker before it starts (over the IPC channel: keys never go through the environment). */
export interface StartMessage {
  type: 'start';
  databaseUrl?: string;
  serviceKeys: Record<string, string>;
  /** Only the first worker migrates and seeds the demo world. */
  first: boolean;
  /** One worker runs the price feed (one clock, not one per process); its replacement takes it over. */
  priceFeed: boolean;
}

/** Every worker is up: a worker answers /readyz 200 only from then on. */
export interface PlatformReadyMessage {
  type: 'platform-ready';
}

export interface ListeningMessage {
  type: 'waiting';
}

export interface ReadyMessage {
  type: 'ready';
  started: Omit<StartedPlatform, 'processes' | 'embedded'>;
}
