import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeTeam, signedInUser } from '../helpers/factories.js';
import { call } from '../helpers/accounts.js';
import { fakeSmtp } from '../helpers/smtp-sink.js';

/**
 * Every mail Gantry sends names the operator (GANTRY_BRAND_NAME; docs/operations.md,
 * Branding): its sender, subject and body, as delivered over SMTP.
 */
describe('the brand in every mail, as delivered', () => {
  const smtp = fakeSmtp();
  let t: TestApp;
  before(async () => {
    const port = await smtp.listen();
    t = await createTestApp({
      env: { GANTRY_SMTP_URL: `smtp://127.0.0.1:${port}`, GANTRY_BRAND_NAME: 'Northwind Cloud' },
    });
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  const api = (url: string, payload: object, headers: Record<string, string> = {}) =>
    t.inject({ method: 'POST', url: `/api/v1${url}`, payload, headers, remoteAddress: '10.63.0.1' });
  const delivered = async (to: string) => {
    await t.app.kernel.mailer.deliverPending();
    return smtp.received.filter((m) => m.to.some((r) => r.includes(to)));
  };
  /** RFC 2047 encoded words (nodemailer encodes a subject with quotes), back to text. */
  const decodeWords = (header: string) =>
    header
      .replace(/(\?=)\s+(?==\?)/g, '$1')
      .replace(/=\?UTF-8\?([QB])\?([^?]*)\?=/gi, (_, encoding: string, text: string) =>
        encoding.toUpperCase() === 'B'
          ? Buffer.from(text, 'base64').toString('utf8')
          : Buffer.from(
              text
                .replace(/_/g, ' ')
                .replace(/=([0-9A-F]{2})/gi, (_h, hex: string) => String.fromCharCode(parseInt(hex, 16))),
              'latin1',
            ).toString('utf8'),
      );
  /** The header lines of a delivered message, unfolded (RFC 5322 2.2.3) and decoded, and its body. */
  const parts = (data: string) => {
    const [head, ...body] = data.split('\r\n\r\n');
    return { head: decodeWords(head.replace(/\r\n[ \t]+/g, ' ')), body: body.join('\r\n\r\n') };
  };

  it('confirmation, sign-in link, reset code, password changed, email change and invitation: sender, subject and body', async () => {
    const address = `brand-${Date.now()}@example.test`;
    assert.equal((await api('/auth/register', { email: address, password: 'a good password' })).statusCode, 201);
    assert.equal((await api('/auth/magic-link', { email: address })).statusCode, 202);
    assert.equal((await api('/auth/forgot-password', { email: address })).statusCode, 202);
    const recovery = (await delivered(address)).find((m) => /reset code/.test(m.data))!;
    const code = /code is (\d{6})/.exec(recovery.data)![1];
    const exchanged = await api('/auth/exchange-recovery-code', { email: address, code });
    assert.equal(exchanged.statusCode, 200, exchanged.payload);
    const reset = await api('/auth/reset-password', {
      resetToken: JSON.parse(exchanged.payload).data.resetToken,
      password: 'another good password',
    });
    assert.equal(reset.statusCode, 200, reset.payload);

    const mover = await signedInUser(t.app);
    const newAddress = `moved-${Date.now()}@example.test`;
    const change = await api(
      '/auth/change-email',
      { newEmail: newAddress, password: mover.user.password },
      mover.headers,
    );
    assert.equal(change.statusCode, 202, change.payload);

    const { owner, account } = await makeTeam(t.app);
    const invitee = `invitee-${Date.now()}@example.test`;
    assert.equal(
      (await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, { email: invitee, role: 'viewer' }))
        .status,
      201,
    );

    const mails = [
      ...(await delivered(address)),
      ...(await delivered(mover.user.email)),
      ...(await delivered(newAddress)),
      ...(await delivered(invitee)),
    ].map((m) => parts(m.data));
    const subjects = mails.map((m) => /^Subject: (.*)$/m.exec(m.head)![1]).sort();
    assert.deepEqual(
      subjects,
      [
        'Confirm your email for Northwind Cloud',
        'Confirm your new email for Northwind Cloud',
        `Invitation to join "${account.displayName ?? account.legalName}" on Northwind Cloud`,
        'Your Northwind Cloud email is about to change',
        'Your Northwind Cloud password reset code',
        'Your Northwind Cloud password was changed',
        'Your Northwind Cloud sign-in link',
      ].sort(),
    );
    for (const mail of mails) {
      const subject = /^Subject: (.*)$/m.exec(mail.head)![1];
      assert.match(mail.head, /^From: "?Northwind Cloud"? <no-reply@gantry\.local>$/m, subject);
      assert.match(mail.body.replace(/=\r\n/g, ''), /Northwind Cloud/, `${subject}: the body names the brand`);
      assert.doesNotMatch(`${mail.head}\n${mail.body}`, /Gantry/, `${subject}: no other name`);
    }
  });
});
