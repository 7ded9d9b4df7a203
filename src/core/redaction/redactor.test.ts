import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NOT_A_VALUE } from './redaction-values.js';
import { createRedactor, DEFAULT_REDACTION_PATTERNS, REDACTED, redactDeep } from './redactor.js';

const redact = createRedactor();

describe('default redaction patterns', () => {
  it.each([
    ['api_key=sk-abc123', 'api_key=<REDACTED>'],
    ['apikey: xyz987654', 'apikey: <REDACTED>'],
    ['API-KEY = "abc def"', 'API-KEY = "<REDACTED>"'],
    ['{"api_key":"sk-abc"}', '{"api_key":"<REDACTED>"}'],
    ['{\\"password\\":\\"hunter2\\"}', '{\\"password\\":\\"<REDACTED>\\"}'],
    ['password: hunter2', 'password: <REDACTED>'],
    ["passwd='correct horse battery'", "passwd='<REDACTED>'"],
    ['DB_PASSWORD=s3cr3t!', 'DB_PASSWORD=<REDACTED>'],
    ['client_secret=abc.def', 'client_secret=<REDACTED>'],
    ['GITHUB_TOKEN=ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'GITHUB_TOKEN=<REDACTED>'],
    ['aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'aws_secret_access_key=<REDACTED>'],
    ['secretAccessKey: "abc"', 'secretAccessKey: "<REDACTED>"'],
    ['x-api-key: abc', 'x-api-key: <REDACTED>'],
    ['Authorization: Bearer abcdefghijklmnop', 'Authorization: <REDACTED>'],
    ['curl -H "Authorization: Basic dXNlcjpwYXNz"', 'curl -H "Authorization: <REDACTED>"'],
    ['use bearer eyJhbGciOiJIUzI1NiJ9abc for it', 'use <REDACTED> for it'],
    ['AKIAIOSFODNN7EXAMPLE', REDACTED],
    ['key ASIAY34FZKBOKMUTVV7A here', `key ${REDACTED} here`],
    ['postgres://admin:s3cr3t@db:5432/x', 'postgres://admin:<REDACTED>@db:5432/x'],
    ['sk-proj-abcdefghijklmnopqrstuvwx', REDACTED],
    ['sk-ant-api03-abcdefghijklmnopqrstuvwx', REDACTED],
    ['ghp_abcdefghijklmnopqrstuvwxyz0123456789', REDACTED],
    [`github_pat_${'a'.repeat(22)}_${'b'.repeat(59)}`, REDACTED],
    ['xoxb-123456789012-abcdefghij', REDACTED],
    ['AIzaSyA-abcdefghijklmnopqrstuvwxyz01234', REDACTED],
    ['sk_live_abcdefghijklmnop1234', REDACTED],
    ['rk_test_abcdefghijklmnop1234', REDACTED],
    [
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
      REDACTED,
    ],
    ['-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc==\n-----END RSA PRIVATE KEY-----', REDACTED],
    ['-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----', REDACTED],
  ])('%j -> %j', (input, expected) => {
    expect(redact(input)).toBe(expected);
  });

  it.each([
    'max_tokens: 128000, summaryTokens=480, tokens: 5',
    'the author: Bob',
    'token count is 42',
    'sk-short',
    'see https://example.com/path@v2',
    'compact.token_estimate',
  ])('leaves %j alone', (input) => {
    expect(redact(input)).toBe(input);
  });

  it('honours patterns, extraPatterns and a custom callback', () => {
    const custom = createRedactor({
      patterns: ['(?i)secret-[0-9]+'],
      extraPatterns: ['\\binternal-[0-9]+\\b'],
      custom: (text) => text.replaceAll('Alice', '<NAME>'),
    });
    expect(custom('SECRET-42 internal-7 Alice api_key=x')).toBe('<REDACTED> <REDACTED> <NAME> api_key=x');
    expect(DEFAULT_REDACTION_PATTERNS.length).toBeGreaterThan(10);
  });

  it('redactDeep copies, redacts every string and survives cycles', () => {
    const input: Record<string, unknown> = {
      text: 'password: hunter2',
      list: ['api_key=abc123', 3, null, true],
      nested: { when: new Date(0), url: 'https://u:pw1234@h/x' },
    };
    input.self = input;
    const output = redactDeep(input, redact) as Record<string, unknown>;
    expect(output).not.toBe(input);
    expect(output.text).toBe('password: <REDACTED>');
    expect(output.list).toEqual(['api_key=<REDACTED>', 3, null, true]);
    expect((output.nested as Record<string, unknown>).url).toBe('https://u:<REDACTED>@h/x');
    expect((output.nested as Record<string, unknown>).when).toEqual(new Date(0));
    expect(output.self).toBe(output);
    expect(input.text).toBe('password: hunter2');
  });

  it('redactDeep redacts object keys, and keys redacted alike keep their values apart', () => {
    const key = `sk-proj-${'Ab3'.repeat(16)}`;
    const input = {
      env: { [key]: 'OPENAI', '<REDACTED>': 'literal', 'https://u:pw1234@h/x': 1, role: 'user' },
    };
    expect(redactDeep(input, redact)).toEqual({
      env: { '<REDACTED>': 'OPENAI', '<REDACTED>#2': 'literal', 'https://u:<REDACTED>@h/x': 1, role: 'user' },
    });
    // A key seen clean before is not trusted for another redactor.
    expect(redactDeep({ role: 1 }, () => 'x')).toEqual({ x: 1 });
  });
});

const alnum = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const upperDigits = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const chars = (alphabet: string, min: number, max: number) =>
  fc.array(fc.constantFrom(...alphabet), { minLength: min, maxLength: max }).map((list) => list.join(''));

/** Each supported kind: the secret itself, and the text it appears in. */
const secrets: fc.Arbitrary<{ kind: string; secret: string; text: string }> = fc.oneof(
  chars(alnum, 20, 48).map((s) => ({ kind: 'openai', secret: `sk-${s}`, text: `sk-${s}` })),
  chars(alnum, 20, 48).map((s) => ({ kind: 'openai-proj', secret: `sk-proj-${s}`, text: `sk-proj-${s}` })),
  chars(alnum, 24, 60).map((s) => ({
    kind: 'anthropic',
    secret: `sk-ant-api03-${s}`,
    text: `sk-ant-api03-${s}`,
  })),
  chars(upperDigits, 16, 16).map((s) => ({ kind: 'aws-id', secret: `AKIA${s}`, text: `AKIA${s}` })),
  chars(`${alnum}/+`, 40, 40).map((s) => ({
    kind: 'aws-secret',
    secret: s,
    text: `aws_secret_access_key=${s}`,
  })),
  chars(alnum, 36, 36).map((s) => ({ kind: 'github', secret: `ghp_${s}`, text: `ghp_${s}` })),
  chars(`${alnum}-`, 20, 40).map((s) => ({
    kind: 'slack',
    secret: `xoxb-1234-${s}`,
    text: `xoxb-1234-${s}`,
  })),
  chars(`${alnum}_-`, 35, 35).map((s) => ({ kind: 'google', secret: `AIza${s}`, text: `AIza${s}` })),
  chars(alnum, 24, 40).map((s) => ({ kind: 'stripe', secret: `sk_live_${s}`, text: `sk_live_${s}` })),
  fc
    .tuple(chars(alnum, 10, 30), chars(alnum, 10, 30), chars(alnum, 10, 40))
    .map(([a, b, c]) => ({ kind: 'jwt', secret: `eyJ${a}.eyJ${b}.${c}`, text: `eyJ${a}.eyJ${b}.${c}` })),
  chars(`${alnum}/+`, 40, 200).map((s) => ({
    kind: 'pem',
    secret: s,
    text: `-----BEGIN PRIVATE KEY-----\n${s}\n-----END PRIVATE KEY-----`,
  })),
  chars(`${alnum}._~+/-`, 16, 60).map((s) => ({
    kind: 'bearer',
    secret: s,
    text: `Authorization: Bearer ${s}`,
  })),
  fc
    .tuple(
      fc.constantFrom('password', 'api_key', 'apiKey', 'client_secret', 'token', 'passwd', 'SECRET_KEY'),
      fc.constantFrom('=', ': ', ' = ', '":"'),
      // No `)`: a value with a name, `)` and an operator (`password=A)%AAAAAAAAAAAA`, seed
      // 1573942733) reads as code, `f(password=A) % x`, and the redactor rightly lets code be.
      // Values with `)` glued to more of them are the cases below the property.
      chars(`${alnum}!@#$%^&*(-_`, 12, 40),
    )
    .map(([key, separator, value]) => ({
      kind: 'assignment',
      secret: value,
      text: `${key}${separator}${value}`,
    })),
  chars(alnum, 12, 30).map((s) => ({
    kind: 'url',
    secret: s,
    text: `https://deploy:${s}@git.example.com/repo.git`,
  })),
);

const words = fc.array(
  fc.oneof(
    fc.constantFrom('run', 'the', 'tests', 'fix', 'deploy', 'config', 'é', '✓', '{', '}', '"note"'),
    chars(alnum, 1, 12),
  ),
  { maxLength: 12 },
);
const gap = fc.constantFrom(' ', '\n', ' (', ') ', ', ', '\t', ' "', '" ');

describe('property: redaction never leaves a generated secret in the output', () => {
  it('in free text, tool arguments and tool results', () => {
    fc.assert(
      fc.property(
        secrets,
        words,
        words,
        gap,
        gap,
        fc.constantFrom('text', 'arguments', 'result'),
        ({ kind, secret, text }, before, after, left, right, where) => {
          // A value that opens a bracket, closed by the gap after it, is a call
          // (`password=njAAAAA(AAAA) `, seed 1101, 20,000 runs: `getToken(ARGS)` to the
          // redactor, which lets code that names a secret be).
          fc.pre(!(kind === 'assignment' && right.startsWith(')') && /^[A-Za-z_$][\w$]*\(/.test(secret)));
          const embedded = `${before.join(' ')}${left}${text}${right}${after.join(' ')}`;
          const message =
            where === 'text'
              ? { role: 'user', content: embedded }
              : where === 'arguments'
                ? {
                    role: 'assistant',
                    tool_calls: [
                      { id: 'c1', function: { name: 'sh', arguments: JSON.stringify({ cmd: embedded }) } },
                    ],
                  }
                : { role: 'tool', tool_call_id: 'c1', content: embedded };
          const output = JSON.stringify(redactDeep(message, redact));
          return !output.includes(secret);
        },
      ),
      // A fixed seed keeps CI reproducible; FC_SEED=<n> explores others, FC_RUNS=<n> runs more.
      { numRuns: Number(process.env.FC_RUNS ?? 1000), seed: Number(process.env.FC_SEED ?? 20_261_127) },
    );
  });

  // The rule of SECURITY.md: a key glued to `=` (or to `:`, for a value that is no lower-case
  // namespace such as `auth:login`) with a value glued to it is an assignment, whatever prose
  // follows (the prose may name secrets itself: `... then rotate the key`).
  it('a glued assignment of a word before prose', () => {
    const proseWord = fc.constantFrom(
      ...'the a and then run tests is set it to key token password secret rotate later in of when you'.split(
        ' ',
      ),
    );
    const word = fc
      .tuple(fc.boolean(), chars('abcdefghijklmnopqrstuvwxyz', 4, 16))
      .map(([capital, letters]) => (capital ? letters[0]!.toUpperCase() + letters.slice(1) : letters))
      .filter(
        (value) =>
          !NOT_A_VALUE.has(value.toLowerCase()) && !/pass|pwd|secret|token|key|auth|cred/i.test(value),
      );
    fc.assert(
      fc.property(
        fc.constantFrom('password', 'passwd', 'secret', 'token', 'api_key', 'DB_PASSWORD', 'client_secret'),
        fc.constantFrom('=', ':'),
        word,
        fc.constantFrom(' ', ', ', '; ', '. '),
        fc.array(proseWord, { minLength: 2, maxLength: 8 }),
        fc.constantFrom('', 'then ', 'export ', '# '),
        (key, separator, value, gap, prose, lead) => {
          fc.pre(separator === '=' || /^[A-Z]/.test(value));
          const output = redact(`${lead}${key}${separator}${value}${gap}${prose.join(' ')}`);
          return !output.includes(value);
        },
      ),
      { numRuns: Number(process.env.FC_RUNS ?? 300), seed: Number(process.env.FC_SEED ?? 20_261_129) },
    );
  });

  // Found by the property above (seed 1715365784, 50,000 runs): a value followed by a line of
  // prose was taken for prose itself, so the password before the prose was let through.
  it.each([
    ['password=AAAAAAAAAAAA run the A run', 'AAAAAAAAAAAA'],
    ['password=Hunter22 and then run the tests', 'Hunter22'],
    ['password: CorrectHorse and then run the tests', 'CorrectHorse'],
  ])('a value before a line of prose is redacted: %s', (text, secret) => {
    const output = redact(text);
    expect(output).not.toContain(secret);
    expect(output).toContain(REDACTED);
  });

  // A key glued to `=` or `:` with its value glued to it is an assignment even when prose
  // follows (SECURITY.md listed `password=swordfish and then run the tests` as a known leak:
  // a lower-case or capitalized first word was read as the start of the prose).
  it.each([
    ['password=swordfish and then run the tests', 'swordfish'],
    ['password=Swordfish and then run the tests', 'Swordfish'],
    ['password:Swordfish and then run the tests', 'Swordfish'],
    ['passwd=swordfish and then run the tests', 'swordfish'],
    ['secret=swordfish and then run the tests', 'swordfish'],
    ['token=swordfish and then run the tests', 'swordfish'],
    ['api_key=swordfish and then run the tests', 'swordfish'],
    ['DB_PASSWORD=swordfish and then run the tests', 'swordfish'],
    ['export PASSWORD=swordfish and then run the tests', 'swordfish'],
    // The prose after the value names a secret word (it was read as a placeholder of words).
    ['password=swordfish and then rotate the key', 'swordfish'],
    ['token=swordfish then set the password', 'swordfish'],
    // A comma or a semicolon, then prose (it was read as a variable name ending a statement).
    ['api_key=swordfish, then run the tests', 'swordfish'],
    ['password=swordfish; then run the tests', 'swordfish'],
  ])('a glued assignment before prose is redacted: %s', (text, secret) => {
    const output = redact(text);
    expect(output).not.toContain(secret);
    expect(output).toContain(REDACTED);
  });

  it.each([
    'the password is what you type',
    'password: is what you type in the box',
    'password=is what you type in the box',
    'password=YOUR_API_KEY_HERE and then run the tests',
    'login(password=userPass) and then run the tests',
    'token = none of them are set in the tests',
    'login(password=secret, user=name)',
    'password="your token"',
  ])('prose, placeholders and code around a glued key stay: %s', (text) => {
    expect(redact(text)).toBe(text);
  });

  // Found by the property above (seeds 1847569851, 2132506173, 2109698731 and 792282800, 50,000 runs): a value with a
  // closing bracket or a comma at its start or after one letter had an empty first word or
  // `a` (an article), read as no value at all.
  it.each([
    ['password=)AAAAAAAAAAAA', ')AAAAAAAAAAAA'],
    ['password=A)AAAAAAAAAAAA', 'A)AAAAAAAAAAAA'],
    ['password=)!AAAAAAAAAAAA', '!AAAAAAAAAAAA'],
    ['password=hAhx)AAAAAAAAAAAA', 'AAAAAAAAAAAA'],
    ['password=A)AAAAAAAAAAAA run the tests', 'A)AAAAAAAAAAAA'],
    ['password=a,Xk29fLq0Zt', 'Xk29fLq0Zt'],
    ['password=)Ab3x9Kq2Lm and more', 'Ab3x9Kq2Lm'],
    ['DB_PASSWORD=]Zq8#rT2pLx', 'Zq8#rT2pLx'],
    ['token: ,k7Hn2Lw9Qp4s', 'k7Hn2Lw9Qp4s'],
    // Found by the property above (seed 1101, 20,000 runs): a reference glued to an operator
    // and more of the value was read as code.
    ['password=%A%&AAAAAAAAAAAA', 'AAAAAAAAAAAA'],
    ['password=%TOKEN%|Xk29fLq0Zt7', 'Xk29fLq0Zt7'],
  ])('a value led by a closing bracket or a comma is redacted: %s', (text, secret) => {
    const output = redact(text);
    expect(output).not.toContain(secret);
    expect(output).toContain(REDACTED);
  });

  it.each([
    'login(password=)',
    'f(password=)[0]',
    'call(token=), next(x)',
    'x = { password=}',
    'password: a, b',
    'fetch(url, {auth=none}).then(cb)',
    'login(password=userPass).then(cb)',
    'login(password=userPass)',
    // A name, a bracket and an operator: code (generated as `A)%AAAAAAAAAAAA`, seed 1573942733).
    'f(password=A)%AAAAAAAAAAAA',
    'set PASSWORD=%DB_PASSWORD%&& echo done',
  ])('no value before a closing bracket stays: %s', (text) => {
    expect(redact(text)).toBe(text);
  });

  it.each([
    'password: must be set in the config file',
    'token: Expired tokens are removed at the next login',
    'secret: NOTE that it is rotated by the ops team',
  ])('prose after a secret-named key stays: %s', (text) => {
    expect(redact(text)).toBe(text);
  });
});

describe('structured secrets', () => {
  it('replaces scalars under secret-named keys, whatever they look like', async () => {
    const { redactDeep, createRedactor } = await import('./redactor.js');
    const out = redactDeep(
      {
        input: {
          password: 'hunter2',
          api_key: 'abc',
          db: { authToken: 42, note: 'fine' },
          max_tokens: 500,
          input_tokens: 7,
        },
      },
      createRedactor(),
    );
    expect(out).toEqual({
      input: {
        password: '<REDACTED>',
        api_key: '<REDACTED>',
        db: { authToken: '<REDACTED>', note: 'fine' },
        max_tokens: 500,
        input_tokens: 7,
      },
    });
  });

  it('names an invalid pattern in an invalid_config error', async () => {
    const { createRedactor } = await import('./redactor.js');
    expect(() => createRedactor({ extraPatterns: ['(unclosed'] })).toThrow(
      /redaction pattern "\(unclosed" is not a valid regular expression/,
    );
  });
});

describe('session ids are identifiers, not secrets', () => {
  it('keeps sessionId / session_id values, still replaces session tokens and cookies', () => {
    const record = {
      sessionId: 'sess_9f8e7d6c5b4a3921',
      session_id: 'run-2026-11-23',
      nested: { sessionId: 42 },
      session_token: 'abc',
      cookie: 'sid=1',
    };
    expect(redactDeep(record, redact)).toEqual({
      sessionId: 'sess_9f8e7d6c5b4a3921',
      session_id: 'run-2026-11-23',
      nested: { sessionId: 42 },
      session_token: REDACTED,
      cookie: REDACTED,
    });
  });

  it('leaves "session_id=..." text alone', () => {
    expect(redact('session_id=sess_9f8e7d6c5b4a3921 sessionId: abc')).toBe(
      'session_id=sess_9f8e7d6c5b4a3921 sessionId: abc',
    );
  });
});

describe('rule selection', () => {
  it('runs a subset of the default rules, and a user pattern after them', () => {
    const onlyAws = createRedactor({
      patterns: DEFAULT_REDACTION_PATTERNS.filter((pattern) => pattern.includes('AKIA')),
      extraPatterns: ['(?i)ticket-\\d+'],
    });
    expect(onlyAws('AKIAIOSFODNN7EXAMPLE password=x TICKET-12')).toBe(`${REDACTED} password=x ${REDACTED}`);
  });
});
