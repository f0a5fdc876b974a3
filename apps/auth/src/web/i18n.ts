import type { Scope } from '@trading/auth';

/** The texts of the pages a vendor app's users see (sign-in, consent, OAuth errors), per locale. */
const MESSAGES = {
  en: {
    signInTitle: 'Sign in',
    email: 'E-mail',
    password: 'Password',
    signInButton: 'Sign in',
    enterBoth: 'Enter your e-mail and password.',
    wrongPassword: 'The e-mail or password is wrong.',
    tooMany: (minutes: number) => `Too many failed sign-ins. Try again in ${minutes} minute(s).`,
    consentTitle: 'Allow access?',
    consentWants: (app: string) => `${app} wants to access your Trading API account`,
    consentBy: (company: string) => `Provided by ${company}`,
    consentWill: 'If you allow it, this app will be able to:',
    consentSignedInAs: 'Signed in as',
    consentRevokeHint: 'You can withdraw this access at any time in your developer dashboard under "Authorised apps".',
    privacyPolicy: 'Privacy policy',
    terms: 'Terms of service',
    allow: 'Allow',
    deny: 'Deny',
    badLinkTitle: 'This sign-in link does not work',
    badLinkHint: 'Nothing was shared with the app. Go back to the app and try again, or contact its support.',
    consentExpired: 'This consent request has expired or was already answered. Go back to the app and start again.',
    scopes: {
      'read:accounts': 'See your accounts, positions, margin and profile (name and e-mail)',
      'write:accounts': 'Change your account settings',
      'read:orders': 'See your orders and trade history',
      'write:orders': 'Place, change and cancel orders for you',
      'read:banking': 'See your cash balances and funding transactions',
      'write:banking': 'Deposit and withdraw money for you',
    } satisfies Record<Scope, string>,
  },
  de: {
    signInTitle: 'Anmelden',
    email: 'E-Mail',
    password: 'Passwort',
    signInButton: 'Anmelden',
    enterBoth: 'Bitte E-Mail und Passwort eingeben.',
    wrongPassword: 'E-Mail oder Passwort ist falsch.',
    tooMany: (minutes: number) => `Zu viele fehlgeschlagene Anmeldungen. Bitte in ${minutes} Minute(n) erneut versuchen.`,
    consentTitle: 'Zugriff erlauben?',
    consentWants: (app: string) => `${app} möchte auf Ihr Trading-API-Konto zugreifen`,
    consentBy: (company: string) => `Anbieter: ${company}`,
    consentWill: 'Wenn Sie zustimmen, kann diese App:',
    consentSignedInAs: 'Angemeldet als',
    consentRevokeHint: 'Sie können diesen Zugriff jederzeit im Entwickler-Dashboard unter „Authorised apps“ widerrufen.',
    privacyPolicy: 'Datenschutzerklärung',
    terms: 'Nutzungsbedingungen',
    allow: 'Erlauben',
    deny: 'Ablehnen',
    badLinkTitle: 'Dieser Anmeldelink funktioniert nicht',
    badLinkHint: 'Es wurde nichts mit der App geteilt. Kehren Sie zur App zurück und versuchen Sie es erneut, oder wenden Sie sich an deren Support.',
    consentExpired: 'Diese Anfrage ist abgelaufen oder wurde bereits beantwortet. Kehren Sie zur App zurück und beginnen Sie erneut.',
    scopes: {
      'read:accounts': 'Ihre Konten, Positionen, Margin und Ihr Profil (Name und E-Mail) einsehen',
      'write:accounts': 'Ihre Kontoeinstellungen ändern',
      'read:orders': 'Ihre Aufträge und Ihren Handelsverlauf einsehen',
      'write:orders': 'In Ihrem Namen Aufträge erteilen, ändern und stornieren',
      'read:banking': 'Ihre Barguthaben und Ein- und Auszahlungen einsehen',
      'write:banking': 'In Ihrem Namen Geld ein- und auszahlen',
    } satisfies Record<Scope, string>,
  },
};

export type Messages = (typeof MESSAGES)['en'];

export function messages(locale: string): Messages {
  return locale === 'de' ? MESSAGES.de : MESSAGES.en;
}
