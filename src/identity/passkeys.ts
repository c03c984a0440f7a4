import { isIP } from 'node:net';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { inTransaction } from '../db/tx.js';
import { isUniqueViolation } from '../db/engine.js';
import { badRequest, conflict, DomainError, notFound } from '../http/errors.js';
import { newId } from '../lib/ids.js';
import type { Kernel } from '../kernel.js';
import * as factorStore from './factor-store.js';
import { passkeyAddedMail } from './factor-mails.js';
import type { OneTimeTokens } from './one-time-tokens.js';
import type { UserRow } from './store.js';

/**
 * Passkeys (WebAuthn Level 3) through @simplewebauthn/server (docs/identity.md, Passkeys). The
 * relying party is GANTRY_PUBLIC_URL: its host name is the RP ID and its origin the one
 * expected. Challenges are made by the library, kept server-side as one-time secrets (only
 * their SHA-256, 5 minutes, single use, bound to the user they were made for) and found again
 * from the challenge the browser signed, so nothing the client says about them is trusted.
 * User verification is required both ways: a passkey sign-in is then two factors in one.
 */
const REGISTRATION = 'webauthn_registration';

/**
 * The library, loaded at the first passkey ceremony: with its certificate parsers it is a tenth
 * of what every start (each CLI command) would evaluate otherwise (docs/operations.md, Memory).
 */
const webauthn = () => import('@simplewebauthn/server');
const AUTHENTICATION = 'webauthn_authentication';
const CHALLENGE_TTL_SEC = 5 * 60;
/** More than anyone keeps, few enough that the list and its options stay small. */
const MAX_PASSKEYS = 20;

export type PasskeySupport = { available: true; rpId: string; origin: string } | { available: false; reason: string };

/**
 * Browsers run WebAuthn only in a secure context and never for an IP address as the RP ID:
 * a public URL on an address, or on plain http other than localhost, cannot offer passkeys.
 */
function passkeySupport(publicUrl: string): PasskeySupport {
  const url = new URL(publicUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0)
    return {
      available: false,
      reason:
        'Passkeys need a host name: browsers refuse them on an IP address. Set GANTRY_PUBLIC_URL to a name (http://localhost with its port works for trying).',
    };
  const local = host === 'localhost' || host.endsWith('.localhost');
  if (url.protocol !== 'https:' && !local)
    return {
      available: false,
      reason: 'Passkeys need https: browsers refuse them on plain http, except on localhost.',
    };
  return { available: true, rpId: host, origin: url.origin };
}

export interface PasskeyView {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  /** synced (multi-device, backed up) or device-bound. */
  synced: boolean;
}

const present = (row: {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
  backed_up: number;
}) =>
  ({
    id: row.id,
    name: row.name,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    synced: row.backed_up === 1,
  }) satisfies PasskeyView;

/** The challenge a browser signed, read from its clientDataJSON; null when that is not readable. */
function signedChallenge(response: { response?: { clientDataJSON?: unknown } }): string | null {
  const raw = response.response?.clientDataJSON;
  if (typeof raw !== 'string') return null;
  try {
    const data = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof data.challenge === 'string' && /^[A-Za-z0-9_-]{16,128}$/.test(data.challenge) ? data.challenge : null;
  } catch {
    return null;
  }
}

const unverified = () => new DomainError('INVALID_CREDENTIALS', 'The passkey could not be verified');

export function createPasskeys(kernel: Kernel, tokens: OneTimeTokens) {
  const { db, clock, config, mailer } = kernel;
  const support = passkeySupport(config.publicUrl);

  function relyingParty(): { rpId: string; origin: string } {
    if (!support.available) throw new DomainError('NOT_CONFIGURED', support.reason);
    return support;
  }

  /** Uses up the challenge a response signed: the user it was made for (null: anyone), else null. */
  async function spendChallenge(purpose: string, challenge: string | null) {
    if (!challenge) return null;
    return inTransaction(db, (trx) => tokens.consume(trx, purpose, challenge));
  }

  return {
    support,

    list: async (userId: string): Promise<PasskeyView[]> => (await factorStore.listPasskeys(db, userId)).map(present),

    async registrationOptions(user: UserRow): Promise<PublicKeyCredentialCreationOptionsJSON> {
      const rp = relyingParty();
      const existing = await factorStore.listPasskeys(db, user.id);
      if (existing.length >= MAX_PASSKEYS) throw conflict(`You have ${MAX_PASSKEYS} passkeys; remove one first`);
      const options = await (await webauthn()).generateRegistrationOptions({
        rpName: config.brand.name,
        rpID: rp.rpId,
        userName: user.email,
        userDisplayName: user.full_name ?? user.email,
        // The user handle a discoverable credential returns at sign-in: our user id.
        userID: new TextEncoder().encode(user.id),
        attestationType: 'none',
        excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: JSON.parse(p.transports) })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
        timeout: CHALLENGE_TTL_SEC * 1000,
      });
      await inTransaction(db, (trx) =>
        tokens.issue(trx, {
          userId: user.id,
          purpose: REGISTRATION,
          ttlSec: CHALLENGE_TTL_SEC,
          secret: options.challenge,
        }),
      );
      return options;
    },

    /** Verifies a new credential against a challenge made for this user, and keeps it. */
    async register(user: UserRow, response: RegistrationResponseJSON, name: string | null): Promise<PasskeyView> {
      const rp = relyingParty();
      const challenge = signedChallenge(response);
      const used = await spendChallenge(REGISTRATION, challenge);
      if (!used || used.userId !== user.id)
        throw badRequest('This passkey answers no registration you started, or it expired; start again');
      let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
      try {
        verified = await (await webauthn()).verifyRegistrationResponse({
          response,
          expectedChallenge: challenge!,
          expectedOrigin: rp.origin,
          expectedRPID: rp.rpId,
          requireUserVerification: true,
        });
      } catch (err) {
        throw badRequest(`The passkey was refused: ${(err as Error).message}`);
      }
      if (!verified.verified) throw badRequest('The passkey was refused');
      const info = verified.registrationInfo;
      const now = clock.now().toISOString();
      const row = {
        id: newId(),
        user_id: user.id,
        credential_id: info.credential.id,
        public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
        counter: info.credential.counter,
        transports: JSON.stringify(info.credential.transports ?? []),
        name: name ?? (info.credentialBackedUp ? 'Synced passkey' : 'Passkey on a security key or device'),
        device_type: info.credentialDeviceType,
        backed_up: info.credentialBackedUp ? 1 : 0,
        created_at: now,
        last_used_at: null,
      };
      try {
        await inTransaction(db, async (trx) => {
          await factorStore.insertPasskey(trx, row);
          await mailer.enqueue(trx, passkeyAddedMail(config, user.email, row.name));
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict('This passkey is already registered');
        throw err;
      }
      void mailer.deliverPending();
      return present(row);
    },

    async remove(userId: string, id: string): Promise<void> {
      if (!(await factorStore.deletePasskey(db, userId, id))) throw notFound('Passkey');
    },

    /**
     * Options for a sign-in: any discoverable passkey (`forUserId` null), or one of this user's
     * (a second step or a step-up, where the user is already known).
     */
    async authenticationOptions(forUserId: string | null): Promise<PublicKeyCredentialRequestOptionsJSON> {
      const rp = relyingParty();
      const allow = forUserId ? await factorStore.listPasskeys(db, forUserId) : null;
      if (allow && allow.length === 0) throw conflict('You have no passkey');
      const options = await (await webauthn()).generateAuthenticationOptions({
        rpID: rp.rpId,
        allowCredentials: allow?.map((p) => ({ id: p.credential_id, transports: JSON.parse(p.transports) })),
        userVerification: 'required',
        timeout: CHALLENGE_TTL_SEC * 1000,
      });
      await inTransaction(db, (trx) =>
        tokens.issue(trx, {
          userId: forUserId,
          purpose: AUTHENTICATION,
          ttlSec: CHALLENGE_TTL_SEC,
          secret: options.challenge,
        }),
      );
      return options;
    },

    /**
     * Verifies an assertion and returns whose passkey it is. The challenge must be one we made
     * (and not yet used), for this user when it was made for one; the signature counter must
     * move forward (a cloned authenticator shows an old one) and is advanced conditionally.
     */
    async authenticate(response: AuthenticationResponseJSON, forUserId: string | null = null): Promise<string> {
      const rp = relyingParty();
      const challenge = signedChallenge(response);
      const used = await spendChallenge(AUTHENTICATION, challenge);
      if (!used) throw unverified();
      const row = await factorStore.findPasskeyByCredentialId(db, String(response.id ?? ''));
      const expectedUser = used.userId ?? forUserId;
      if (!row || (expectedUser !== null && row.user_id !== expectedUser)) throw unverified();
      if (forUserId !== null && row.user_id !== forUserId) throw unverified();
      const handle = response.response?.userHandle;
      if (handle && Buffer.from(handle, 'base64url').toString('utf8') !== row.user_id) throw unverified();
      let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
      try {
        verified = await (await webauthn()).verifyAuthenticationResponse({
          response,
          expectedChallenge: challenge!,
          expectedOrigin: rp.origin,
          expectedRPID: rp.rpId,
          credential: {
            id: row.credential_id,
            publicKey: new Uint8Array(Buffer.from(row.public_key, 'base64url')),
            counter: Number(row.counter),
            transports: JSON.parse(row.transports),
          },
          requireUserVerification: true,
        });
      } catch {
        throw unverified();
      }
      if (!verified.verified) throw unverified();
      const moved = await factorStore.advancePasskeyCounter(
        db,
        row.id,
        Number(row.counter),
        verified.authenticationInfo.newCounter,
        clock.now().toISOString(),
      );
      if (!moved) throw unverified();
      return row.user_id;
    },
  };
}

export type Passkeys = ReturnType<typeof createPasskeys>;
