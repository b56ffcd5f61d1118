/**
 * `pnpm keys [--k8s]`: a fresh Ed25519 key pair for each signer of internal identities (the
 * gateway, and every service that calls another: packages/contracts/src/chain.ts SYNC_CALLS),
 * printed for the distributed mode's configuration, to put in place of the empty lines of:
 *   pnpm keys         .env (docker compose; .env.example lists the variables)
 *   pnpm keys --k8s   deploy/k8s/secrets.env (Kubernetes: the Secret's keys)
 * Each private key goes to its own process only (INTERNAL_SIGNING_KEY); the public keys go to every
 * service (INTERNAL_PUBLIC_KEYS). Run it again to rotate them all at once.
 */
import { parseArgs } from 'node:util';
import {
  formatInternalPublicKeys,
  generateSigningKey,
  INTERNAL_SIGNERS,
  privateKeyFrom,
} from '../packages/kit/src/internal-keys.js';

const { values } = parseArgs({ options: { k8s: { type: 'boolean', default: false } } });
const signingKeys = INTERNAL_SIGNERS.map((name) => [name, generateSigningKey()] as const);
const publicKeys = formatInternalPublicKeys(
  signingKeys.map(([name, key]) => [name, privateKeyFrom(key)!] as const),
);
const line = (envName: string, k8sName: string, value: string) =>
  values.k8s ? `${k8sName}=${value}` : `${envName}=${value}`;
const lines = [
  ...signingKeys.map(([name, key]) => line(`${name.toUpperCase()}_SIGNING_KEY`, `${name}-signing-key`, key)),
  line('INTERNAL_PUBLIC_KEYS', 'internal-public-keys', publicKeys),
];
process.stdout.write(`${lines.join('\n')}\n`);
