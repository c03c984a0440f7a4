import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';

/**
 * Time-based one-time passwords (RFC 6238) with the parameters every authenticator app assumes
 * when the otpauth:// URL says nothing else: HMAC-SHA-1, 6 digits, 30-second steps. The codes
 * and the URL come from otpauth; nothing here computes an HMAC itself.
 */
const PERIOD_SEC = 30;
const DIGITS = 6;
const ALGORITHM = 'SHA1';
/** One step either side of now: a clock 30 s off still works (RFC 6238 5.2 allows a small window). */
const WINDOW = 1;

/** A new secret: 20 random bytes (160 bits, RFC 4226 4 R6), base32 as the apps take it. */
export const newTotpSecret = (): string => new Secret({ size: 20 }).base32;

const totpOf = (secretBase32: string, issuer = '', label = 'OTPAuth') =>
  new TOTP({
    issuer,
    label,
    secret: Secret.fromBase32(secretBase32),
    algorithm: ALGORITHM,
    digits: DIGITS,
    period: PERIOD_SEC,
  });

/** The Key URI an authenticator app scans: otpauth://totp/Issuer:label?secret=...&issuer=... */
export const otpauthUrl = (secretBase32: string, issuer: string, label: string): string =>
  totpOf(secretBase32, issuer, label).toString();

/**
 * The time step a code belongs to, when it is right within the window around `nowMs`; else
 * null. The caller refuses a step at or before the last one it accepted (replay).
 */
export function matchingStep(secretBase32: string, code: string, nowMs: number): number | null {
  const delta = TOTP.validate({
    token: code,
    secret: Secret.fromBase32(secretBase32),
    algorithm: ALGORITHM,
    digits: DIGITS,
    period: PERIOD_SEC,
    timestamp: nowMs,
    window: WINDOW,
  });
  return delta === null ? null : TOTP.counter({ period: PERIOD_SEC, timestamp: nowMs }) + delta;
}

/** A code looks like a TOTP code (six digits, spaces allowed as apps show "123 456"). */
export const totpCodeOf = (raw: string): string | null => {
  const code = raw.replace(/\s+/g, '');
  return /^\d{6}$/.test(code) ? code : null;
};

/** The otpauth URL as an SVG QR code (medium error correction), rendered on the server: no script, no image request. */
export async function qrSvg(url: string): Promise<string> {
  return QRCode.toString(url, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
}
