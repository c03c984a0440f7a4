import { createHash } from 'node:crypto';
import { safeEqual } from '../lib/crypto.js';

/** RFC 7636 4.1: 43-128 characters from the unreserved set. */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** S256 challenges are BASE64URL(SHA-256(verifier)): exactly 43 characters, no padding. */
const CHALLENGE = /^[A-Za-z0-9\-_]{43}$/;

export const isWellFormedVerifier = (verifier: string): boolean => VERIFIER.test(verifier);
export const isWellFormedChallenge = (challenge: string): boolean => CHALLENGE.test(challenge);

const s256 = (verifier: string): string => createHash('sha256').update(verifier, 'ascii').digest('base64url');

/** S256 only (docs/interface.md, Authentication 4: plain is not supported). */
export const verifyS256 = (verifier: string, challenge: string): boolean => safeEqual(s256(verifier), challenge);
