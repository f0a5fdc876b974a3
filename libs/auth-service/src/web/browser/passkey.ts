/**
 * Passkey ceremonies on the pages: a form marked data-passkey="register" adds one (its name
 * field goes along), data-passkey="authenticate" signs in or confirms with one. Either asks the
 * server for options (data-options), hands them to the browser's WebAuthn through
 * @simplewebauthn/browser, sends the authenticator's answer (data-verify) with the form's CSRF
 * token, and follows the redirect the server answers; a refusal is shown in data-error.
 */
import { browserSupportsWebAuthn, startAuthentication, startRegistration } from '@simplewebauthn/browser';

type Answer = { options?: unknown; redirect?: string; message?: string };

async function post(url: string, body: Record<string, unknown>): Promise<{ ok: boolean; answer: Answer }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    credentials: 'same-origin',
    body: JSON.stringify(body),
  });
  let answer: Answer = {};
  try {
    answer = (await response.json()) as Answer;
  } catch {
    /* not JSON: said below as a failure */
  }
  return { ok: response.ok, answer };
}

/** Follows the server's redirect; to this very page (another #section at most) that is a reload, to show what changed. */
function go(path: string): void {
  const target = new URL(path, window.location.href);
  if (target.origin !== window.location.origin) return;
  if (target.pathname + target.search !== window.location.pathname + window.location.search) return window.location.assign(target.href);
  window.location.hash = target.hash;
  window.location.reload();
}

function fieldsOf(form: HTMLFormElement): Record<string, string> {
  const fields: Record<string, string> = {};
  new FormData(form).forEach((value, name) => {
    if (typeof value === 'string') fields[name] = value;
  });
  return fields;
}

document.querySelectorAll<HTMLFormElement>('form[data-passkey]').forEach((form) => {
  const kind = form.getAttribute('data-passkey');
  const errorBox = document.getElementById(form.getAttribute('data-error') ?? '');
  let messages: Record<string, string> = {};
  try {
    messages = JSON.parse(form.getAttribute('data-messages') ?? '{}') as Record<string, string>;
  } catch {
    /* English stands in */
  }
  const say = (text: string | undefined) => {
    if (!errorBox) return;
    errorBox.textContent = text ?? messages['failed'] ?? 'The passkey was not accepted.';
    errorBox.hidden = false;
  };
  const button = form.querySelector<HTMLButtonElement>('button[type=submit]');

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (errorBox) errorBox.hidden = true;
    if (!browserSupportsWebAuthn()) return say(messages['unsupported']);
    if (button) button.disabled = true;
    const fields = fieldsOf(form);
    void (async () => {
      const asked = await post(form.getAttribute('data-options') ?? '', fields);
      if (!asked.ok || !asked.answer.options) return say(asked.answer.message);
      let response: unknown;
      try {
        response =
          kind === 'register'
            ? await startRegistration({ optionsJSON: asked.answer.options as Parameters<typeof startRegistration>[0]['optionsJSON'] })
            : await startAuthentication({ optionsJSON: asked.answer.options as Parameters<typeof startAuthentication>[0]['optionsJSON'] });
      } catch {
        // Cancelled, timed out, or no passkey of this site on the device.
        return say(messages['cancelled']);
      }
      const verified = await post(form.getAttribute('data-verify') ?? '', { ...fields, response });
      if (!verified.ok || !verified.answer.redirect) return say(verified.answer.message);
      go(verified.answer.redirect);
    })()
      .catch(() => say(undefined))
      .finally(() => {
        if (button) button.disabled = false;
      });
  });
});
