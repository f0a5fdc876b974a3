import { sign, verify, type KeyObject } from 'node:crypto';
import type { DeliveredEvent, DomainEvent } from './event-log';

/**
 * A producer's signature on an event: ES256 (P-256, raw r‖s) over its id, type and payload
 * text, with the key's id in front (`<kid>.<signature>`). Whoever can write to the stream but
 * does not hold the producer's private key cannot make an event a consumer will apply, nor
 * move a genuine signature onto another payload.
 */
const signedText = (eventId: string, type: string, payloadJson: string) => `${eventId}\n${type}\n${payloadJson}`;

export function signEvent(event: DomainEvent, key: { kid: string; privateKey: KeyObject }): DomainEvent {
  const signature = sign('sha256', Buffer.from(signedText(event.eventId, event.type, JSON.stringify(event.payload))), {
    key: key.privateKey,
    dsaEncoding: 'ieee-p1363',
  });
  return { ...event, signature: `${key.kid}.${signature.toString('base64url')}` };
}

/** The producer's public keys by kid (e.g. TrustedServiceKeys), and which service must have signed. */
export interface EventSigners {
  get(kid: string): { service: string; key: KeyObject } | undefined;
}

/** Null when `producer` signed exactly this event; otherwise why not. */
export function eventSignatureProblem(event: DeliveredEvent, signers: EventSigners, producer: string): string | null {
  if (!event.signature) return 'unsigned';
  const dot = event.signature.lastIndexOf('.');
  const signer = dot > 0 ? signers.get(event.signature.slice(0, dot)) : undefined;
  if (!signer) return 'signed with an unknown key';
  if (signer.service !== producer) return `signed by ${signer.service}, not ${producer}`;
  const text = signedText(event.eventId, event.type, event.payloadJson ?? JSON.stringify(event.payload));
  const ok = verify(
    'sha256',
    Buffer.from(text),
    { key: signer.key, dsaEncoding: 'ieee-p1363' },
    Buffer.from(event.signature.slice(dot + 1), 'base64url'),
  );
  return ok ? null : 'bad signature';
}
