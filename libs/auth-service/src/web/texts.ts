import type { ErrorCode } from '@trading/errors';

/**
 * Issue 28: the texts of the pages' frame (brand, language switcher), the app-naming sign-in,
 * password reset and its e-mails, the dashboard's validation sentences and notices, and the
 * error and problem pages, per locale. (The older page texts are in ./i18n.ts.) Messages are
 * sentences for a person: no field names, no codes, with the technical detail shown apart.
 */
const EN = {
  brand: 'Trading API',
  language: 'Language',
  signOut: 'Sign out',
  signIn: {
    toApp: (app: string) => `Sign in to continue to ${app}`,
    appBy: (company: string) => `An app by ${company}`,
    logoAlt: (app: string) => `Logo of ${app}`,
    lead: 'Sign in to your Trading API account.',
    forgot: 'Forgot password?',
    passwordChanged: 'Your password has been changed. Sign in with your new password.',
    emailInvalid: 'Enter your e-mail address, for example name@example.com.',
    passwordMissing: 'Enter your password.',
  },
  reset: {
    forgotTitle: 'Reset your password',
    forgotIntro: 'Enter the e-mail address of your account. We will send you a link to choose a new password.',
    send: 'Send the link',
    sentTitle: 'Check your e-mail',
    sent: (email: string, minutes: number) =>
      `If there is an account for ${email}, we have sent it a link to choose a new password. The link works once, within ${minutes} minutes. If nothing arrives, check your spam folder or ask again.`,
    back: 'Back to sign-in',
    title: 'Choose a new password',
    newPassword: 'New password',
    confirm: 'Repeat the new password',
    hint: (min: number) => `At least ${min} characters. A few unrelated words are easy to remember and hard to guess.`,
    save: 'Save the new password',
    tooShort: (min: number) => `The password needs at least ${min} characters.`,
    tooLong: (max: number) => `The password can have at most ${max} characters.`,
    differ: 'The two passwords are not the same.',
    linkInvalidTitle: 'This link no longer works',
    linkInvalid: 'Password links work once, for a short time. Ask for a new one.',
    askAgain: 'Ask for a new link',
    tooMany: (minutes: number) => `Too many requests from your network. Try again in ${minutes} minute(s).`,
    signOutEverywhere: 'Sign out everywhere and revoke all tokens',
    signOutEverywhereHint:
      'Ends every personal access token and every app you allowed, at once. Leave it ticked if someone else may have known your password; untick it to keep your scripts and apps working.',
    afterNote: 'Every browser signed in to your account will be signed out.',
    mailSubject: 'Choose a new password for your Trading API account',
    mailBody: (link: string, minutes: number) =>
      `Hello,\n\nsomeone (hopefully you) asked to reset the password of your Trading API account.\n\nChoose a new password here (the link works once, within ${minutes} minutes):\n\n${link}\n\nIf you did not ask for this, ignore this e-mail: your password stays as it is.\n\nTrading API`,
    changedSubject: 'Your Trading API password was changed',
    changedBody: (when: string, revokedAll: boolean) =>
      `Hello,\n\nthe password of your Trading API account was changed on ${when} with a link sent to this address. Every browser signed in to your account was signed out; ${revokedAll ? 'every personal access token and every authorised app was revoked too.' : 'your personal access tokens and authorised apps keep working.'}\n\nIf this was not you, reset your password again at once and contact support.\n\nTrading API`,
  },
  dashboard: {
    validThrough: 'Valid through',
    dateHint: 'Format: YYYY-MM-DD',
    copied: 'Copied',
    nameMissing: 'Give the token a name.',
    nameTooLong: (max: number) => `The name can have at most ${max} characters.`,
    scopeMissing: 'Choose read only, or read and write.',
    ipInvalid: (value: string) =>
      `"${value}" is not an IP address or address range. Write addresses like 203.0.113.7 or 2001:db8::1, or ranges like 10.0.0.0/8.`,
    dateFormat: 'Write the date as YYYY-MM-DD, for example 2027-01-31.',
    dateUnknown: (value: string) => `${value} is not a date in the calendar.`,
    datePast: 'The date must not be in the past.',
    dateTooFar: (max: string) => `The token can be valid for at most one year, until ${max}.`,
    tooManyTokens: (limit: number) => `You already have ${limit} active tokens, the most allowed. Revoke one you no longer use.`,
    refused: 'The token could not be created. Check the form and try again.',
    tokenRevoked: (id: string) => `Token ${id} is revoked. Sessions created from it have ended.`,
    appRevoked: (app: string) => `Access for ${app} is revoked. Every token it held has stopped working.`,
    theApp: 'the app',
    status: { ACTIVE: 'Active', REVOKED: 'Revoked', EXPIRED: 'Expired' },
    outcome: { SUCCESS: 'Success', FAILURE: 'Failed' } as Record<string, string>,
  },
  errors: {
    notFoundTitle: 'Page not found',
    notFound: 'There is no page at this address. Check the link, or go to the sign-in page.',
    technical: 'Technical details (for developers)',
    reference: (id: string) => `Reference: ${id}`,
    home: 'Go to the sign-in page',
    dashboard: 'Back to the dashboard',
    formExpired: 'This form has expired or did not come from this site. Reload the page and try again.',
    appGone: 'This app can no longer be authorised. Go back to the app and start again.',
    tooLong: 'The link is too long to be a sign-in link.',
    problemIntro: 'An API answer named this problem. What it means:',
    problemCode: 'Code',
    problemStatus: 'HTTP status',
    problemUnknown: 'There is no problem with this name.',
  },
  problems: {
    BAD_USER_INPUT: ['Bad request', 'Something in the request is missing or malformed. The answer says which field is at fault.'],
    GRAPHQL_VALIDATION_FAILED: [
      'Invalid GraphQL operation',
      'The GraphQL operation does not fit the schema: a field or argument does not exist or has the wrong type.',
    ],
    GRAPHQL_PARSE_FAILED: ['Invalid GraphQL syntax', 'The GraphQL document could not be read. Check its brackets and quotes.'],
    UNAUTHENTICATED: ['Sign-in needed', 'The request carries no valid token, or its token has expired or was revoked. Get a new one.'],
    FORBIDDEN: ['Not allowed', 'The caller is known, but this action is not allowed for it.'],
    INSUFFICIENT_SCOPE: [
      'Permission missing',
      'The token was not granted the permission (scope) this action needs. Ask the user again for it.',
    ],
    READ_ONLY_TOKEN: ['Read-only token', 'The token may only read. Create a token with read and write access to change anything.'],
    PAT_SESSION_REQUIRED: [
      'Session token needed',
      'Exchange the personal access token for a session token first, then call the API with that.',
    ],
    IP_NOT_ALLOWED: ['Address not allowed', 'The token may only be used from the IP addresses its owner listed.'],
    NOT_FOUND: ['Not found', 'What the request names does not exist, or is not visible to this caller.'],
    METHOD_NOT_ALLOWED: ['Method not allowed', 'This address does not answer this HTTP method.'],
    CONFLICT: ['Conflict', 'The request clashes with the current state, for example something that already exists.'],
    UNSUPPORTED_MEDIA_TYPE: ['Unsupported content type', 'Send the request body as JSON (Content-Type: application/json).'],
    UNPROCESSABLE: ['Cannot be done', 'The request is well formed but breaks a rule, for example an amount with too many decimals.'],
    PAT_LIMIT_REACHED: ['Too many tokens', 'The user holds the most active personal access tokens allowed. Revoke one first.'],
    RATE_LIMITED: ['Too many requests', 'Slow down: wait the number of seconds in the Retry-After header, then try again.'],
    INTERNAL_SERVER_ERROR: ['Unexpected error', 'Something went wrong on our side. Quote the request id when contacting support.'],
    BAD_GATEWAY: ['Upstream error', 'A service behind the API answered something it should not have. Try again later.'],
    SERVICE_UNAVAILABLE: [
      'Briefly unavailable',
      'A service this request needs is briefly unavailable and nothing was changed. Try again shortly.',
    ],
  } satisfies Record<ErrorCode, [string, string]>,
};

export type Texts = typeof EN;

const DE: Texts = {
  brand: 'Trading API',
  language: 'Sprache',
  signOut: 'Abmelden',
  signIn: {
    toApp: (app) => `Melden Sie sich an, um mit ${app} fortzufahren`,
    appBy: (company) => `Eine App von ${company}`,
    logoAlt: (app) => `Logo von ${app}`,
    lead: 'Melden Sie sich bei Ihrem Trading-API-Konto an.',
    forgot: 'Passwort vergessen?',
    passwordChanged: 'Ihr Passwort wurde geändert. Melden Sie sich mit dem neuen Passwort an.',
    emailInvalid: 'Geben Sie Ihre E-Mail-Adresse ein, zum Beispiel name@example.com.',
    passwordMissing: 'Geben Sie Ihr Passwort ein.',
  },
  reset: {
    forgotTitle: 'Passwort zurücksetzen',
    forgotIntro: 'Geben Sie die E-Mail-Adresse Ihres Kontos ein. Wir senden Ihnen einen Link, mit dem Sie ein neues Passwort wählen.',
    send: 'Link senden',
    sentTitle: 'Sehen Sie in Ihr Postfach',
    sent: (email, minutes) =>
      `Falls es ein Konto für ${email} gibt, haben wir einen Link für ein neues Passwort dorthin gesendet. Der Link funktioniert einmal, innerhalb von ${minutes} Minuten. Kommt nichts an, sehen Sie im Spam-Ordner nach oder fragen Sie erneut.`,
    back: 'Zurück zur Anmeldung',
    title: 'Neues Passwort wählen',
    newPassword: 'Neues Passwort',
    confirm: 'Neues Passwort wiederholen',
    hint: (min) => `Mindestens ${min} Zeichen. Ein paar Wörter ohne Zusammenhang sind leicht zu merken und schwer zu erraten.`,
    save: 'Neues Passwort speichern',
    tooShort: (min) => `Das Passwort braucht mindestens ${min} Zeichen.`,
    tooLong: (max) => `Das Passwort darf höchstens ${max} Zeichen haben.`,
    differ: 'Die beiden Passwörter stimmen nicht überein.',
    linkInvalidTitle: 'Dieser Link funktioniert nicht mehr',
    linkInvalid: 'Passwort-Links funktionieren einmal und nur kurze Zeit. Fordern Sie einen neuen an.',
    askAgain: 'Neuen Link anfordern',
    tooMany: (minutes) => `Zu viele Anfragen aus Ihrem Netzwerk. Bitte in ${minutes} Minute(n) erneut versuchen.`,
    signOutEverywhere: 'Überall abmelden und alle Token widerrufen',
    signOutEverywhereHint:
      'Beendet sofort alle persönlichen Zugriffstoken und alle Apps, denen Sie Zugriff erlaubt haben. Lassen Sie das Häkchen gesetzt, falls jemand anderes Ihr Passwort kannte; entfernen Sie es, damit Ihre Skripte und Apps weiter funktionieren.',
    afterNote: 'Alle bei Ihrem Konto angemeldeten Browser werden abgemeldet.',
    mailSubject: 'Neues Passwort für Ihr Trading-API-Konto',
    mailBody: (link, minutes) =>
      `Guten Tag,\n\njemand (hoffentlich Sie) möchte das Passwort Ihres Trading-API-Kontos zurücksetzen.\n\nHier wählen Sie ein neues Passwort (der Link funktioniert einmal, innerhalb von ${minutes} Minuten):\n\n${link}\n\nFalls Sie das nicht waren, ignorieren Sie diese E-Mail: Ihr Passwort bleibt unverändert.\n\nTrading API`,
    changedSubject: 'Ihr Trading-API-Passwort wurde geändert',
    changedBody: (when, revokedAll) =>
      `Guten Tag,\n\ndas Passwort Ihres Trading-API-Kontos wurde am ${when} mit einem an diese Adresse gesendeten Link geändert. Alle angemeldeten Browser wurden abgemeldet; ${revokedAll ? 'auch alle persönlichen Zugriffstoken und autorisierten Apps wurden widerrufen.' : 'Ihre persönlichen Zugriffstoken und autorisierten Apps funktionieren weiter.'}\n\nFalls Sie das nicht waren, setzen Sie Ihr Passwort sofort erneut zurück und wenden Sie sich an den Support.\n\nTrading API`,
  },
  dashboard: {
    validThrough: 'Gültig bis',
    dateHint: 'Format: JJJJ-MM-TT (YYYY-MM-DD)',
    copied: 'Kopiert',
    nameMissing: 'Geben Sie dem Token einen Namen.',
    nameTooLong: (max) => `Der Name darf höchstens ${max} Zeichen haben.`,
    scopeMissing: 'Wählen Sie „Nur lesen“ oder „Lesen und schreiben“.',
    ipInvalid: (value) =>
      `„${value}“ ist keine IP-Adresse und kein Adressbereich. Schreiben Sie Adressen wie 203.0.113.7 oder 2001:db8::1 oder Bereiche wie 10.0.0.0/8.`,
    dateFormat: 'Schreiben Sie das Datum als JJJJ-MM-TT, zum Beispiel 2027-01-31.',
    dateUnknown: (value) => `${value} ist kein Kalenderdatum.`,
    datePast: 'Das Datum darf nicht in der Vergangenheit liegen.',
    dateTooFar: (max) => `Ein Token gilt höchstens ein Jahr, also bis ${max}.`,
    tooManyTokens: (limit) => `Sie haben bereits ${limit} aktive Token, die Höchstzahl. Widerrufen Sie eines, das Sie nicht mehr brauchen.`,
    refused: 'Das Token konnte nicht erstellt werden. Prüfen Sie das Formular und versuchen Sie es erneut.',
    tokenRevoked: (id) => `Token ${id} ist widerrufen. Damit erstellte Sitzungen sind beendet.`,
    appRevoked: (app) => `Der Zugriff für ${app} ist widerrufen. Alle Token der App funktionieren nicht mehr.`,
    theApp: 'die App',
    status: { ACTIVE: 'Aktiv', REVOKED: 'Widerrufen', EXPIRED: 'Abgelaufen' },
    outcome: { SUCCESS: 'Erfolgreich', FAILURE: 'Fehlgeschlagen' },
  },
  errors: {
    notFoundTitle: 'Seite nicht gefunden',
    notFound: 'Unter dieser Adresse gibt es keine Seite. Prüfen Sie den Link oder gehen Sie zur Anmeldung.',
    technical: 'Technische Details (für Entwickler)',
    reference: (id) => `Referenz: ${id}`,
    home: 'Zur Anmeldung',
    dashboard: 'Zurück zum Dashboard',
    formExpired:
      'Dieses Formular ist abgelaufen oder stammt nicht von dieser Website. Laden Sie die Seite neu und versuchen Sie es erneut.',
    appGone: 'Diese App kann nicht mehr autorisiert werden. Kehren Sie zur App zurück und beginnen Sie erneut.',
    tooLong: 'Der Link ist zu lang für einen Anmeldelink.',
    problemIntro: 'Eine Antwort der API nannte dieses Problem. Was es bedeutet:',
    problemCode: 'Code',
    problemStatus: 'HTTP-Status',
    problemUnknown: 'Ein Problem mit diesem Namen gibt es nicht.',
  },
  problems: {
    BAD_USER_INPUT: [
      'Fehlerhafte Anfrage',
      'In der Anfrage fehlt etwas oder ist falsch geschrieben. Die Antwort nennt das betroffene Feld.',
    ],
    GRAPHQL_VALIDATION_FAILED: [
      'Ungültige GraphQL-Operation',
      'Die GraphQL-Operation passt nicht zum Schema: Ein Feld oder Argument fehlt oder hat den falschen Typ.',
    ],
    GRAPHQL_PARSE_FAILED: ['Ungültige GraphQL-Syntax', 'Das GraphQL-Dokument ist nicht lesbar. Prüfen Sie Klammern und Anführungszeichen.'],
    UNAUTHENTICATED: [
      'Anmeldung nötig',
      'Die Anfrage hat kein gültiges Token, oder es ist abgelaufen oder widerrufen. Holen Sie ein neues.',
    ],
    FORBIDDEN: ['Nicht erlaubt', 'Der Aufrufer ist bekannt, darf diese Aktion aber nicht ausführen.'],
    INSUFFICIENT_SCOPE: [
      'Berechtigung fehlt',
      'Dem Token wurde die nötige Berechtigung (Scope) nicht erteilt. Bitten Sie die Person erneut darum.',
    ],
    READ_ONLY_TOKEN: [
      'Token nur zum Lesen',
      'Das Token darf nur lesen. Erstellen Sie ein Token mit Lese- und Schreibzugriff, um etwas zu ändern.',
    ],
    PAT_SESSION_REQUIRED: [
      'Sitzungstoken nötig',
      'Tauschen Sie das persönliche Zugriffstoken zuerst gegen ein Sitzungstoken und rufen Sie die API damit auf.',
    ],
    IP_NOT_ALLOWED: ['Adresse nicht erlaubt', 'Das Token darf nur von den IP-Adressen genutzt werden, die sein Besitzer angegeben hat.'],
    NOT_FOUND: ['Nicht gefunden', 'Was die Anfrage nennt, gibt es nicht, oder der Aufrufer darf es nicht sehen.'],
    METHOD_NOT_ALLOWED: ['Methode nicht erlaubt', 'Diese Adresse beantwortet diese HTTP-Methode nicht.'],
    CONFLICT: ['Konflikt', 'Die Anfrage widerspricht dem aktuellen Stand, zum Beispiel weil etwas schon existiert.'],
    UNSUPPORTED_MEDIA_TYPE: ['Inhaltstyp nicht unterstützt', 'Senden Sie den Inhalt als JSON (Content-Type: application/json).'],
    UNPROCESSABLE: [
      'Nicht ausführbar',
      'Die Anfrage ist richtig aufgebaut, verletzt aber eine Regel, zum Beispiel ein Betrag mit zu vielen Nachkommastellen.',
    ],
    PAT_LIMIT_REACHED: ['Zu viele Token', 'Die Person hat die Höchstzahl aktiver persönlicher Zugriffstoken. Zuerst eines widerrufen.'],
    RATE_LIMITED: [
      'Zu viele Anfragen',
      'Bitte langsamer: Warten Sie die im Header Retry-After genannten Sekunden und versuchen Sie es dann erneut.',
    ],
    INTERNAL_SERVER_ERROR: ['Unerwarteter Fehler', 'Bei uns ist etwas schiefgegangen. Nennen Sie dem Support die Request-ID.'],
    BAD_GATEWAY: ['Fehler eines Dienstes', 'Ein Dienst hinter der API hat unerwartet geantwortet. Versuchen Sie es später erneut.'],
    SERVICE_UNAVAILABLE: [
      'Kurz nicht verfügbar',
      'Ein benötigter Dienst ist kurz nicht verfügbar; nichts wurde geändert. Versuchen Sie es gleich erneut.',
    ],
  },
};

const FR: Texts = {
  brand: 'Trading API',
  language: 'Langue',
  signOut: 'Se déconnecter',
  signIn: {
    toApp: (app) => `Connectez-vous pour continuer vers ${app}`,
    appBy: (company) => `Une application de ${company}`,
    logoAlt: (app) => `Logo de ${app}`,
    lead: 'Connectez-vous à votre compte Trading API.',
    forgot: 'Mot de passe oublié ?',
    passwordChanged: 'Votre mot de passe a été modifié. Connectez-vous avec le nouveau.',
    emailInvalid: 'Saisissez votre adresse e-mail, par exemple nom@example.com.',
    passwordMissing: 'Saisissez votre mot de passe.',
  },
  reset: {
    forgotTitle: 'Réinitialiser votre mot de passe',
    forgotIntro: 'Saisissez l’adresse e-mail de votre compte. Nous vous enverrons un lien pour choisir un nouveau mot de passe.',
    send: 'Envoyer le lien',
    sentTitle: 'Consultez vos e-mails',
    sent: (email, minutes) =>
      `S’il existe un compte pour ${email}, nous lui avons envoyé un lien pour choisir un nouveau mot de passe. Le lien fonctionne une seule fois, pendant ${minutes} minutes. Si rien n’arrive, regardez dans vos indésirables ou faites une nouvelle demande.`,
    back: 'Retour à la connexion',
    title: 'Choisir un nouveau mot de passe',
    newPassword: 'Nouveau mot de passe',
    confirm: 'Répétez le nouveau mot de passe',
    hint: (min) => `Au moins ${min} caractères. Quelques mots sans rapport entre eux sont faciles à retenir et difficiles à deviner.`,
    save: 'Enregistrer le nouveau mot de passe',
    tooShort: (min) => `Le mot de passe doit compter au moins ${min} caractères.`,
    tooLong: (max) => `Le mot de passe peut compter au plus ${max} caractères.`,
    differ: 'Les deux mots de passe ne sont pas identiques.',
    linkInvalidTitle: 'Ce lien ne fonctionne plus',
    linkInvalid: 'Les liens de mot de passe fonctionnent une seule fois, pendant peu de temps. Demandez-en un nouveau.',
    askAgain: 'Demander un nouveau lien',
    tooMany: (minutes) => `Trop de demandes depuis votre réseau. Réessayez dans ${minutes} minute(s).`,
    signOutEverywhere: 'Se déconnecter partout et révoquer tous les jetons',
    signOutEverywhereHint:
      'Met fin immédiatement à tous vos jetons d’accès personnels et à toutes les applications autorisées. Laissez la case cochée si quelqu’un d’autre a pu connaître votre mot de passe ; décochez-la pour que vos scripts et applications continuent de fonctionner.',
    afterNote: 'Tous les navigateurs connectés à votre compte seront déconnectés.',
    mailSubject: 'Choisissez un nouveau mot de passe pour votre compte Trading API',
    mailBody: (link, minutes) =>
      `Bonjour,\n\nquelqu’un (vous, espérons-le) a demandé à réinitialiser le mot de passe de votre compte Trading API.\n\nChoisissez un nouveau mot de passe ici (le lien fonctionne une seule fois, pendant ${minutes} minutes) :\n\n${link}\n\nSi vous n’êtes pas à l’origine de cette demande, ignorez cet e-mail : votre mot de passe reste inchangé.\n\nTrading API`,
    changedSubject: 'Le mot de passe de votre compte Trading API a été modifié',
    changedBody: (when, revokedAll) =>
      `Bonjour,\n\nle mot de passe de votre compte Trading API a été modifié le ${when} grâce à un lien envoyé à cette adresse. Tous les navigateurs connectés ont été déconnectés ; ${revokedAll ? 'tous vos jetons d’accès personnels et applications autorisées ont aussi été révoqués.' : 'vos jetons d’accès personnels et applications autorisées continuent de fonctionner.'}\n\nSi ce n’était pas vous, réinitialisez immédiatement votre mot de passe et contactez le support.\n\nTrading API`,
  },
  dashboard: {
    validThrough: 'Valide jusqu’au',
    dateHint: 'Format : AAAA-MM-JJ (YYYY-MM-DD)',
    copied: 'Copié',
    nameMissing: 'Donnez un nom au jeton.',
    nameTooLong: (max) => `Le nom peut compter au plus ${max} caractères.`,
    scopeMissing: 'Choisissez « lecture seule » ou « lecture et écriture ».',
    ipInvalid: (value) =>
      `« ${value} » n’est ni une adresse IP ni une plage d’adresses. Écrivez des adresses comme 203.0.113.7 ou 2001:db8::1, ou des plages comme 10.0.0.0/8.`,
    dateFormat: 'Écrivez la date sous la forme AAAA-MM-JJ, par exemple 2027-01-31.',
    dateUnknown: (value) => `${value} n’est pas une date du calendrier.`,
    datePast: 'La date ne doit pas être passée.',
    dateTooFar: (max) => `Un jeton est valable au plus un an, soit jusqu’au ${max}.`,
    tooManyTokens: (limit) => `Vous avez déjà ${limit} jetons actifs, le maximum permis. Révoquez-en un dont vous n’avez plus besoin.`,
    refused: 'Le jeton n’a pas pu être créé. Vérifiez le formulaire et réessayez.',
    tokenRevoked: (id) => `Le jeton ${id} est révoqué. Les sessions ouvertes avec lui sont terminées.`,
    appRevoked: (app) => `L’accès de ${app} est révoqué. Tous ses jetons ont cessé de fonctionner.`,
    theApp: 'l’application',
    status: { ACTIVE: 'Actif', REVOKED: 'Révoqué', EXPIRED: 'Expiré' },
    outcome: { SUCCESS: 'Réussie', FAILURE: 'Échouée' },
  },
  errors: {
    notFoundTitle: 'Page introuvable',
    notFound: 'Il n’y a pas de page à cette adresse. Vérifiez le lien ou allez à la page de connexion.',
    technical: 'Détails techniques (pour les développeurs)',
    reference: (id) => `Référence : ${id}`,
    home: 'Aller à la page de connexion',
    dashboard: 'Retour au tableau de bord',
    formExpired: 'Ce formulaire a expiré ou ne provient pas de ce site. Rechargez la page et réessayez.',
    appGone: 'Cette application ne peut plus être autorisée. Revenez à l’application et recommencez.',
    tooLong: 'Le lien est trop long pour être un lien de connexion.',
    problemIntro: 'Une réponse de l’API a nommé ce problème. Ce qu’il signifie :',
    problemCode: 'Code',
    problemStatus: 'Statut HTTP',
    problemUnknown: 'Aucun problème ne porte ce nom.',
  },
  problems: {
    BAD_USER_INPUT: [
      'Requête incorrecte',
      'Il manque quelque chose dans la requête ou c’est mal écrit. La réponse nomme le champ en cause.',
    ],
    GRAPHQL_VALIDATION_FAILED: [
      'Opération GraphQL invalide',
      'L’opération GraphQL ne correspond pas au schéma : un champ ou un argument n’existe pas ou a le mauvais type.',
    ],
    GRAPHQL_PARSE_FAILED: ['Syntaxe GraphQL invalide', 'Le document GraphQL est illisible. Vérifiez les accolades et les guillemets.'],
    UNAUTHENTICATED: [
      'Connexion nécessaire',
      'La requête ne porte pas de jeton valide, ou il a expiré ou été révoqué. Obtenez-en un nouveau.',
    ],
    FORBIDDEN: ['Non autorisé', 'L’appelant est connu, mais cette action ne lui est pas permise.'],
    INSUFFICIENT_SCOPE: [
      'Autorisation manquante',
      'Le jeton n’a pas reçu l’autorisation (scope) nécessaire. Redemandez-la à l’utilisateur.',
    ],
    READ_ONLY_TOKEN: [
      'Jeton en lecture seule',
      'Le jeton ne peut que lire. Créez un jeton en lecture et écriture pour modifier quelque chose.',
    ],
    PAT_SESSION_REQUIRED: [
      'Jeton de session nécessaire',
      'Échangez d’abord le jeton d’accès personnel contre un jeton de session, puis appelez l’API avec celui-ci.',
    ],
    IP_NOT_ALLOWED: ['Adresse non autorisée', 'Le jeton ne peut être utilisé que depuis les adresses IP indiquées par son propriétaire.'],
    NOT_FOUND: ['Introuvable', 'Ce que nomme la requête n’existe pas, ou n’est pas visible pour cet appelant.'],
    METHOD_NOT_ALLOWED: ['Méthode non autorisée', 'Cette adresse ne répond pas à cette méthode HTTP.'],
    CONFLICT: ['Conflit', 'La requête contredit l’état actuel, par exemple quelque chose qui existe déjà.'],
    UNSUPPORTED_MEDIA_TYPE: [
      'Type de contenu non pris en charge',
      'Envoyez le corps de la requête en JSON (Content-Type: application/json).',
    ],
    UNPROCESSABLE: [
      'Impossible à exécuter',
      'La requête est bien formée mais enfreint une règle, par exemple un montant avec trop de décimales.',
    ],
    PAT_LIMIT_REACHED: [
      'Trop de jetons',
      'L’utilisateur a déjà le nombre maximal de jetons d’accès personnels actifs. Révoquez-en un d’abord.',
    ],
    RATE_LIMITED: ['Trop de requêtes', 'Ralentissez : attendez le nombre de secondes indiqué par l’en-tête Retry-After, puis réessayez.'],
    INTERNAL_SERVER_ERROR: ['Erreur inattendue', 'Un problème est survenu de notre côté. Indiquez l’identifiant de requête au support.'],
    BAD_GATEWAY: ['Erreur d’un service', 'Un service derrière l’API a répondu de façon inattendue. Réessayez plus tard.'],
    SERVICE_UNAVAILABLE: [
      'Brièvement indisponible',
      'Un service nécessaire est brièvement indisponible et rien n’a été modifié. Réessayez dans un instant.',
    ],
  },
};

const TEXTS: Record<string, Texts> = { en: EN, de: DE, fr: FR };

export function texts(locale: string): Texts {
  return TEXTS[locale] ?? EN;
}

/** Each language named in itself, for the switcher. */
export const LANGUAGE_NAMES: Record<string, string> = { en: 'English', de: 'Deutsch', fr: 'Français' };
