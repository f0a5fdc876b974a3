/**
 * The pages' only script (served as /assets/web.js, so the CSP needs no 'unsafe-inline'):
 * copy buttons, confirmation before destructive forms, and the token form's checks, with the
 * same IP rule the server applies (imported, not rewritten). `npm run web-assets` bundles it.
 */
import { isIpOrCidr } from '@trading/auth/ip-syntax';

type Rule = (value: string, input: HTMLInputElement) => string;

// Copy buttons: data-copy="<id of the element holding the text>".
document.querySelectorAll<HTMLButtonElement>('[data-copy]').forEach((button) => {
  button.addEventListener('click', () => {
    const source = document.getElementById(button.getAttribute('data-copy') ?? '') as HTMLInputElement | null;
    if (!source) return;
    const text = source.value !== undefined ? source.value : (source.textContent ?? '');
    const done = () => {
      button.textContent = 'Copied';
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

// Validation in the page, the same rules the server applies again, each message naming its field.
const rules: Record<string, Rule> = {
  name: (v) => (!v.trim() ? 'name is required' : v.trim().length > 100 ? 'name must be at most 100 characters' : ''),
  expires: (v, input) => {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(v)) return 'expires must be a date';
    if (input.min && v < input.min) return 'expires must not be in the past';
    if (input.max && v > input.max) return `expires must be at most one year from today (${input.max})`;
    return '';
  },
  scope: (v) => (v === 'READ_ONLY' || v === 'READ_WRITE' ? '' : 'scope must be READ_ONLY or READ_WRITE'),
  ips: (v) => {
    const bad = v
      .split(/[\s,]+/)
      .filter(Boolean)
      .find((entry) => !isIpOrCidr(entry));
    return bad ? `ips: "${bad}" is not an IPv4/IPv6 address or CIDR range` : '';
  },
  email: (v) => (/^[^\s@]+@[^\s@]+$/.test(v.trim()) ? '' : 'email must be an e-mail address'),
  password: (v) => (v ? '' : 'password is required'),
};

document.querySelectorAll<HTMLFormElement>('form[data-validate]').forEach((form) => {
  form.addEventListener('submit', (event) => {
    let firstBad: HTMLElement | null = null;
    for (const [name, rule] of Object.entries(rules)) {
      const field = form.elements.namedItem(name) as HTMLInputElement | RadioNodeList | null;
      if (!field) continue;
      const input = (field instanceof RadioNodeList ? field[0] : field) as HTMLInputElement;
      const message = rule(field.value ?? '', input);
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
