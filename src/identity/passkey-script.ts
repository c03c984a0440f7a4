/**
 * The pages' passkey script (docs/identity.md, Passkeys), served as a file beside
 * @simplewebauthn/browser's own bundle: the CSP allows script files of this server only, never
 * inline script. It drives forms that carry `data-passkey-options` (where to POST the form for
 * the ceremony's options) and a `credential` field: a `button[data-passkey]` (register or
 * authenticate) fetches the options, runs the ceremony, puts the answer in `credential` (with
 * the button's own name and value, when it has one) and submits the form. The buttons sit in
 * `[data-passkey-offer]` elements, hidden until the browser is known to support passkeys:
 * without script or WebAuthn nothing offers a button that cannot work, and
 * `[data-passkey-unsupported]` says why.
 */
export const PASSKEY_SCRIPT = `(function () {
  'use strict';
  var lib = window.SimpleWebAuthnBrowser;
  if (!lib || !lib.browserSupportsWebAuthn()) {
    document.querySelectorAll('[data-passkey-unsupported]').forEach(function (el) { el.hidden = false; });
    return;
  }
  function say(form, text) {
    var out = form.querySelector('[data-passkey-status]');
    if (!out) return;
    out.textContent = text;
    out.hidden = !text;
  }
  document.querySelectorAll('[data-passkey-offer]').forEach(function (el) { el.hidden = false; });
  document.querySelectorAll('button[data-passkey]').forEach(function (button) {
    button.addEventListener('click', async function () {
      var form = button.form;
      say(form, '');
      button.disabled = true;
      try {
        var res = await fetch(form.getAttribute('data-passkey-options'), {
          method: 'POST',
          credentials: 'same-origin',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(new FormData(form)).toString()
        });
        if (!res.ok) throw new Error('options refused: ' + res.status);
        var optionsJSON = (await res.json()).options;
        var answer = button.getAttribute('data-passkey') === 'register'
          ? await lib.startRegistration({ optionsJSON: optionsJSON })
          : await lib.startAuthentication({ optionsJSON: optionsJSON });
        form.querySelector('input[name=credential]').value = JSON.stringify(answer);
        if (button.name) {
          var choice = document.createElement('input');
          choice.type = 'hidden';
          choice.name = button.name;
          choice.value = button.value;
          form.appendChild(choice);
        }
        form.submit();
      } catch (err) {
        button.disabled = false;
        say(form, err && err.name === 'NotAllowedError'
          ? 'No passkey was used. Try again, or use another way.'
          : 'The passkey did not work. Try again, or use another way.');
      }
    });
  });
})();
`;
