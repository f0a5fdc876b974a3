import { DE } from './texts/de';
import { EN } from './texts/en';
import { FR } from './texts/fr';

/**
 * The texts of every page people see, per locale: the pages' frame (brand, language switcher),
 * home, sign-in (also naming the app it continues to), consent and OAuth errors, password reset
 * and its e-mails, the developer dashboard with its validation sentences and notices, and the
 * error and problem pages. Messages are sentences for a person: no field names, no codes, with
 * the technical detail shown apart. Every locale has every key of the English texts (its type).
 */
export type Texts = typeof EN;

const TEXTS: Record<string, Texts> = { en: EN, de: DE, fr: FR };

export function texts(locale: string): Texts {
  return TEXTS[locale] ?? EN;
}

/** Each language named in itself, for the switcher. */
export const LANGUAGE_NAMES: Record<string, string> = { en: 'English', de: 'Deutsch', fr: 'Français' };
