import fc from 'fast-check';

/**
 * Secrets of 14 real provider shapes, for redaction tests: `secret` is what must never leave
 * the process (the key material), `text` is how it appears in a transcript.
 */
export interface PlantedSecret {
  kind: string;
  secret: string;
  text: string;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UPPER_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const BASE64 = `${ALNUM}+/`;
const URL_SAFE = `${ALNUM}_-`;

const chars = (alphabet: string, min: number, max = min) =>
  fc.array(fc.constantFrom(...alphabet), { minLength: min, maxLength: max }).map((list) => list.join(''));

const same = (kind: string) => (secret: string) => ({ kind, secret, text: secret });

/** One arbitrary per supported kind, keyed by kind. */
export const SECRET_SHAPES: Readonly<Record<string, fc.Arbitrary<PlantedSecret>>> = {
  openai: chars(URL_SAFE, 48, 64).map((s) => same('openai')(`sk-proj-${s}`)),
  anthropic: chars(URL_SAFE, 93).map((s) => same('anthropic')(`sk-ant-api03-${s}AA`)),
  'aws-access-key': chars(UPPER_DIGITS, 16).map((s) => same('aws-access-key')(`AKIA${s}`)),
  'aws-secret-key': chars(BASE64, 40).map((s) => ({
    kind: 'aws-secret-key',
    secret: s,
    text: `aws_secret_access_key=${s}`,
  })),
  github: chars(ALNUM, 36).map((s) => same('github')(`ghp_${s}`)),
  'github-pat': fc
    .tuple(chars(ALNUM, 22), chars(ALNUM, 59))
    .map(([a, b]) => same('github-pat')(`github_pat_${a}_${b}`)),
  slack: fc
    .tuple(chars('0123456789', 11), chars('0123456789', 13), chars(ALNUM, 24))
    .map(([a, b, c]) => same('slack')(`xoxb-${a}-${b}-${c}`)),
  stripe: chars(ALNUM, 24, 99).map((s) => same('stripe')(`sk_live_${s}`)),
  google: chars(URL_SAFE, 35).map((s) => same('google')(`AIza${s}`)),
  jwt: fc
    .tuple(chars(URL_SAFE, 20, 40), chars(URL_SAFE, 30, 80), chars(URL_SAFE, 43))
    .map(([a, b, c]) => same('jwt')(`eyJhbGciOi${a}.eyJzdWIiOi${b}.${c}`)),
  pem: fc.array(chars(BASE64, 64), { minLength: 3, maxLength: 8 }).map((lines) => {
    const body = lines.join('\n');
    return {
      kind: 'pem',
      secret: body,
      text: `-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END RSA PRIVATE KEY-----`,
    };
  }),
  password: fc
    .tuple(
      fc.constantFrom('password', 'DB_PASSWORD', 'passwd', 'client_secret'),
      // The first character is alphanumeric: a value opening with `%NAME%` or `$NAME`, clipped
      // right after the name, is a variable reference in every respect (the redactor lets
      // references be), so it cannot stand for a password there.
      chars(ALNUM, 1),
      chars(`${ALNUM}!#$%^&*-_`, 13, 31),
    )
    .map(([key, first, rest]) => ({
      kind: 'password',
      secret: first + rest,
      text: `${key}=${first}${rest}`,
    })),
  'url-credentials': chars(ALNUM, 14, 30).map((s) => ({
    kind: 'url-credentials',
    secret: s,
    text: `https://deploy:${s}@git.example.com/team/repo.git`,
  })),
  bearer: chars(`${ALNUM}._~+/-`, 24, 64).map((s) => ({
    kind: 'bearer',
    secret: s,
    text: `Authorization: Bearer ${s}`,
  })),
};

/** Any supported kind. */
export const anySecret: fc.Arbitrary<PlantedSecret> = fc.oneof(...Object.values(SECRET_SHAPES));

/** One secret of every kind, deterministic for a seed. */
export function oneOfEachKind(seed: number): PlantedSecret[] {
  return Object.values(SECRET_SHAPES).map(
    (shape, index) => fc.sample(shape, { seed: seed + index, numRuns: 1 })[0]!,
  );
}

/** The forms a leaked secret may take in a sink: raw, JSON-escaped, URL-encoded, base64. */
export function leakForms(secret: string): string[] {
  return [
    secret,
    JSON.stringify(secret).slice(1, -1),
    encodeURIComponent(secret),
    Buffer.from(secret).toString('base64'),
  ];
}

/**
 * Finds runs of `minLength` or more characters of any of `secrets` (in any of its
 * {@link leakForms}) in a text. Each secret line counts on its own (a PEM body's lines), so
 * JSON's escaped newlines do not hide a leak. Returns `kind: piece` descriptions.
 */
export function leakFinder(
  secrets: readonly PlantedSecret[],
  minLength = 12,
): (haystack: string) => string[] {
  const pieces = new Map<string, string>();
  for (const { kind, secret } of secrets) {
    for (const line of secret.split('\n')) {
      for (const form of leakForms(line)) {
        for (let start = 0; start + minLength <= form.length; start++) {
          pieces.set(form.slice(start, start + minLength), kind);
        }
      }
    }
  }
  return (haystack) => {
    const found = new Set<string>();
    for (let start = 0; start + minLength <= haystack.length; start++) {
      const piece = haystack.slice(start, start + minLength);
      const kind = pieces.get(piece);
      if (kind !== undefined) found.add(`${kind}: ${piece}`);
    }
    return [...found];
  };
}
