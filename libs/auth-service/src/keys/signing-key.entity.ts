import { EntitySchema } from 'typeorm';

/** An ES256 key pair for access tokens. Several may be published at once so keys can rotate. */
export interface SigningKey {
  kid: string;
  privateKeyPem: string;
  publicJwk: Record<string, unknown>;
  createdAt: Date;
  retiredAt: Date | null;
}

export const SigningKeyEntity = new EntitySchema<SigningKey>({
  name: 'SigningKey',
  tableName: 'signing_keys',
  columns: {
    kid: { type: 'text', primary: true },
    privateKeyPem: { type: 'text', name: 'private_key_pem' },
    publicJwk: { type: 'jsonb', name: 'public_jwk' },
    createdAt: { type: 'timestamptz', name: 'created_at', createDate: true },
    retiredAt: { type: 'timestamptz', name: 'retired_at', nullable: true },
  },
});
