/**
 * The pages' only script (served as /assets/web.js, so the CSP needs no 'unsafe-inline'):
 * copy buttons, confirmation before destructive forms, and the forms' checks (token, sign-in,
 * new password), with the same IP rule the server applies (imported, not rewritten), in the
 * page's language. `npm run web-assets` bundles it.
 */
import { isIpOrCidr } from '@trading/auth/ip-syntax';
import './passkey';

type Rule = (value: string, input: HTMLInputElement, messages: Record<string, string>) => string;

// Copy buttons: data-copy="<id of the element holding the text>".
document.querySelectorAll<HTMLButtonElement>('[data-copy]').forEach((button) => {
  button.addEventListener('click', () => {
    const source = document.getElementById(button.getAttribute('data-copy') ?? '') as HTMLInputElement | null;
    if (!source) return;
    const text = source.value !== undefined ? source.value : (source.textContent ?? '');
    const done = () => {
      button.textContent = button.getAttribute('data-copied-label') ?? 'Copied';
      button.setAttribute('data-copied', 'true');
    };
    const fallback = () => {
      source.focus();
      source.select();
      document.execCommand('copy');
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, () => {
        fallback();
        done();
      });
    } else {
      fallback();
      done();
    }
  });
});

// Confirmation before destructive forms: data-confirm="question".
document.querySelectorAll<HTMLFormElement>('form[data-confirm]').forEach((form) => {
  form.addEventListener('submit', (event) => {
    if (!window.confirm(form.getAttribute('data-confirm') ?? '')) event.preventDefault();
  });
});

// Validation in the page, the same rules the server applies again. The sentences come from the
// form's data-messages (JSON, in the page's language); English stands in for any missing one.
type Messages = Record<string, string>;
const FALLBACK: Messages = {
  'name.missing': 'Give the token a name.',
  'name.long': 'The name can have at most 100 characters.',
  scope: 'Choose read only, or read and write.',
  ips: '"{value}" is not an IP address or address range.',
  'expires.format': 'Write the date as YYYY-MM-DD, for example 2027-01-31.',
  'expires.past': 'The date must not be in the past.',
  'expires.far': 'The token can be valid for at most one year.',
  email: 'Enter your e-mail address, for example name@example.com.',
  password: 'Enter your password.',
  'newPassword.short': 'The password is too short.',
  'confirmPassword.differ': 'The two passwords are not the same.',
};
const say = (m: Messages, key: string, value = '') => (m[key] ?? FALLBACK[key] ?? key).replace('{value}', value);

const rules: Record<string, Rule> = {
  name: (v, _input, m) => (!v.trim() ? say(m, 'name.missing') : v.trim().length > 100 ? say(m, 'name.long') : ''),
  expires: (v, input, m) => {
    const value = v.trim();
    const min = input.getAttribute('data-min') ?? '';
    const max = input.getAttribute('data-max') ?? '';
    if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return say(m, 'expires.format');
    if (min && value < min) return say(m, 'expires.past');
    if (max && value > max) return say(m, 'expires.far');
    return '';
  },
  scope: (v, _input, m) => (v === 'READ_ONLY' || v === 'READ_WRITE' ? '' : say(m, 'scope')),
  ips: (v, _input, m) => {
    const bad = v
      .split(/[\s,]+/)
      .filter(Boolean)
      .find((entry) => !isIpOrCidr(entry));
    return bad ? say(m, 'ips', bad) : '';
  },
  email: (v, _input, m) => (/^[^\s@]+@[^\s@]+$/.test(v.trim()) ? '' : say(m, 'email')),
  password: (v, _input, m) => (v ? '' : say(m, 'password')),
  newPassword: (v, input, m) => (v.length < Number(input.getAttribute('minlength') ?? 0) ? say(m, 'newPassword.short') : ''),
  confirmPassword: (v, input, m) => {
    const first = input.form?.elements.namedItem('newPassword') as HTMLInputElement | null;
    return first && v !== first.value ? say(m, 'confirmPassword.differ') : '';
  },
};

document.querySelectorAll<HTMLFormElement>('form[data-validate]').forEach((form) => {
  let messages: Messages = {};
  try {
    messages = JSON.parse(form.getAttribute('data-messages') ?? '{}') as Messages;
  } catch {
    messages = {};
  }
  form.addEventListener('submit', (event) => {
    let firstBad: HTMLElement | null = null;
    for (const [name, rule] of Object.entries(rules)) {
      const field = form.elements.namedItem(name) as HTMLInputElement | RadioNodeList | null;
      if (!field) continue;
      const input = (field instanceof RadioNodeList ? field[0] : field) as HTMLInputElement;
      const message = rule(field.value ?? '', input, messages);
      const slot = form.querySelector(`[data-error-for="${name}"]`);
      if (slot) slot.textContent = message;
      input.setAttribute('aria-invalid', message ? 'true' : 'false');
      if (message && !firstBad) firstBad = input;
    }
    if (firstBad) {
      event.preventDefault();
      firstBad.focus();
    }
  });
});

// A table too wide for its card even on a wide screen (long names, many addresses, a long
// language) shows its rows as cards instead (the stylesheet's table.stack.cards), never a
// sideways scroll or a word broken in the middle.
const fitTables = () =>
  document.querySelectorAll<HTMLTableElement>('table.stack').forEach((table) => {
    table.classList.remove('cards');
    const box = table.parentElement;
    if (box && table.scrollWidth > box.clientWidth + 1) table.classList.add('cards');
  });
fitTables();
window.addEventListener('resize', fitTables);
