import { B, prefixed, type RedactionRule } from './redaction-rule.js';

/**
 * The prefixed key formats of the providers an agent transcript meets, after the rule
 * families of gitleaks and secretlint: cloud, VCS, CI, package registries, chat, payment,
 * databases, AI providers and the tools around them. Each format is caught from its prefix
 * and a short tail (a clipped key too); the body runs on through its character class.
 */

const ALNUM = '[A-Za-z0-9]';
const URL_SAFE = '[A-Za-z0-9_-]';
const HEX = '[a-fA-F0-9]';

/**
 * Where `sk-` may start: as for every prefix, and not after `<letter or digit>-` either
 * (`task-sk-4f2a...` is an id), unless it is one of the formats only keys have (`sk-proj-`).
 */
const SK_START =
  '(?:(?:(?<![A-Za-z])(?<![A-Za-z0-9]-)|(?<=\\\\[nrt]))sk-|sk-(?=(?:proj|ant|svcacct|admin)-))';

/** `sk-spinner-bounce` (a CSS class) is no key: lower-case words only, no digit, no key family. */
function acceptOpenAiKey(match: string): boolean {
  const body = match.slice(3);
  if (!/^[a-z]{1,14}(?:-[a-z]{1,14}){1,8}$/.test(body)) return true;
  return /^(?:proj|ant|svcacct|admin|None)-/.test(body);
}

/** `npm_execpath` and `npm_config_cache` are environment variables, not tokens. */
const acceptNpmToken = (match: string, _groups: unknown, text: string, start: number) =>
  /[0-9A-Z]/.test(match.slice(4)) && text[start + match.length] !== '_';

/** The provider formats, in the order they run. */
export const PROVIDER_RULES: readonly RedactionRule[] = [
  // AI providers
  {
    name: 'openai-anthropic-key',
    pattern: `${SK_START}[A-Za-z0-9_-]{8,4096}`,
    triggers: ['sk-'],
    extend: URL_SAFE,
    accept: acceptOpenAiKey,
  },
  prefixed('groq-key', ['gsk_'], 'gsk_', ALNUM, 16),
  prefixed('replicate-token', ['r8_'], 'r8_', ALNUM, 20),
  prefixed('perplexity-xai-tavily-key', ['pplx-', 'xai-', 'tvly-'], '(?:pplx|xai|tvly)-', URL_SAFE, 16),
  prefixed('langsmith-key', ['lsv2_'], 'lsv2_(?:pt|sk)_', URL_SAFE, 8),
  prefixed('pinecone-key', ['pcsk_'], 'pcsk_', URL_SAFE, 8),
  prefixed('huggingface-token', ['hf_'], 'hf_', ALNUM, 30),
  // Cloud
  prefixed(
    'aws-access-key-id',
    ['AKIA', 'ASIA', 'AGPA', 'AIDA', 'AROA', 'ANPA', 'ANVA', 'AIPA', 'ABIA', 'ACCA'],
    '(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)',
    '[0-9A-Z]',
    8,
  ),
  {
    name: 'google-api-key',
    pattern: `${B}AIza[0-9A-Za-z_-]{8,35}`,
    triggers: ['AIza'],
    extend: URL_SAFE,
  },
  prefixed('google-oauth-token', ['ya29.'], 'ya29\\.', URL_SAFE, 6),
  prefixed('google-client-secret', ['GOCSPX-'], 'GOCSPX-', URL_SAFE, 5),
  {
    // `abc8Q~...`: three characters and a digit before `Q~`, taken back with the rest.
    name: 'azure-ad-client-secret',
    pattern: '(?<=(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}[0-9])Q~[A-Za-z0-9_~.-]{31,34}',
    triggers: ['Q~'],
    extend: '[A-Za-z0-9_~.-]',
    extendBack: { chars: '[A-Za-z0-9_~.]', max: 4 },
  },
  prefixed('alibaba-access-key', ['LTAI'], 'LTAI', ALNUM, 12),
  prefixed('digitalocean-token', ['dop_v1_', 'doo_v1_', 'dor_v1_'], 'do[opr]_v1_', HEX, 8),
  prefixed('cloudflare-origin-ca-key', ['v1.0-'], 'v1\\.0-[a-f0-9]{24}-', '[a-f0-9]', 16),
  prefixed('databricks-token', ['dapi'], 'dapi', HEX, 16, { tail: '(?:-[0-9]{1,2})?' }),
  prefixed('vault-token', ['hvs.', 'hvb.', 'hvr.'], 'hv[sbr]\\.', URL_SAFE, 20),
  {
    // `<14>.atlasv1.<60-70>`: the part before the marker is taken back with the rest.
    name: 'terraform-cloud-token',
    pattern: '(?<=(?<![A-Za-z0-9])[A-Za-z0-9]{14})\\.atlasv1\\.[A-Za-z0-9_=-]{20,4096}',
    triggers: ['.atlasv1.'],
    extend: '[A-Za-z0-9_=-]',
    extendBack: { chars: '[A-Za-z0-9]', max: 14 },
  },
  prefixed('doppler-token', ['dp.'], 'dp\\.(?:pt|st|sa|ct|scim|audit)\\.', ALNUM, 8),
  prefixed('pulumi-token', ['pul-'], 'pul-', HEX, 16),
  prefixed('heroku-token', ['HRKU-'], 'HRKU-', URL_SAFE, 16),
  prefixed('planetscale-token', ['pscale_'], 'pscale_(?:pw|tkn|oauth)_', '[A-Za-z0-9_.=-]', 8),
  prefixed('supabase-token', ['sbp_', 'sb_secret_'], '(?:sbp|sb_secret)_', URL_SAFE, 16),
  prefixed('onepassword-token', ['ops_eyJ'], 'ops_eyJ', '[A-Za-z0-9+/=_-]', 16),
  // VCS and CI
  prefixed('github-token', ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], 'gh[pousr]_', ALNUM, 8),
  prefixed('github-pat', ['github_pat_'], 'github_pat_', '[A-Za-z0-9_]', 1),
  prefixed(
    'gitlab-token',
    [
      'glpat-',
      'gldt-',
      'glrt-',
      'glptt-',
      'glcbt-',
      'glimt-',
      'glsoat-',
      'glffct-',
      'glagent-',
      'gloas-',
      'glft-',
    ],
    'gl(?:pat|dt|rt|ptt|cbt|imt|soat|ffct|agent|oas|ft)-',
    URL_SAFE,
    6,
  ),
  prefixed('gitlab-runner-registration', ['GR1348941'], 'GR1348941', URL_SAFE, 8),
  prefixed(
    'atlassian-bitbucket-token',
    ['ATBB', 'ATATT3', 'ATCTT3'],
    '(?:ATBB|ATATT3|ATCTT3)',
    '[A-Za-z0-9_=.-]',
    16,
  ),
  prefixed('circleci-token', ['CCIPAT_', 'CCIRUT_'], 'CCI(?:PAT|RUT)_', '[A-Za-z0-9_]', 8),
  prefixed('buildkite-token', ['bkua_'], 'bkua_', HEX, 16),
  // Package registries
  {
    name: 'npm-token',
    pattern: `${B}npm_(?![a-z]{1,64}_)[A-Za-z0-9]{8,4096}`,
    triggers: ['npm_'],
    extend: ALNUM,
    accept: acceptNpmToken,
  },
  prefixed('pypi-token', ['pypi-AgE'], 'pypi-AgE', URL_SAFE, 8),
  prefixed('rubygems-token', ['rubygems_'], 'rubygems_', HEX, 16),
  prefixed('docker-hub-token', ['dckr_pat_', 'dckr_oat_'], 'dckr_(?:pat|oat)_', URL_SAFE, 8),
  prefixed('clojars-token', ['CLOJARS_'], 'CLOJARS_', ALNUM, 16),
  prefixed('nuget-key', ['oy2'], 'oy2', '[a-z0-9]', 43, { tail: '(?![A-Za-z0-9])' }),
  prefixed('crates-io-token', ['cio'], 'cio', ALNUM, 32, { tail: '(?![A-Za-z0-9])' }),
  // Chat and messaging
  {
    name: 'slack-token',
    pattern: `${B}(?:xox[abposre]-|xapp-|xoxe\\.xox[bp]-)[A-Za-z0-9-]{6,4096}`,
    triggers: ['xox', 'xapp-'],
    extend: '[A-Za-z0-9-]',
  },
  {
    name: 'chat-webhook',
    pattern:
      '(?:hooks\\.slack\\.com/(?:services|workflows|triggers)/|discord(?:app)?\\.com/api/webhooks/|webhook\\.office\\.com/webhookb2/|outlook\\.office\\.com/webhook/)[A-Za-z0-9@/_-]{1,4096}',
    triggers: [
      'hooks.slack.com',
      'discord.com/api/webhooks/',
      'discordapp.com/api/webhooks/',
      'webhook.office.com/',
      'outlook.office.com/webhook/',
    ],
    extend: '[A-Za-z0-9@/_-]',
  },
  {
    // `123456789:AA...`: the bot id before the colon is taken back with the secret.
    name: 'telegram-bot-token',
    pattern: '(?<=(?<![0-9])[0-9]{5,16}):A[A-Za-z0-9_-]{34}(?![A-Za-z0-9_-])',
    triggers: [':A'],
    extendBack: { chars: '[0-9]', max: 16 },
  },
  prefixed('twilio-api-key', ['SK'], 'SK', HEX, 32, { tail: '(?![A-Za-z0-9])' }),
  prefixed('sendgrid-key', ['SG.'], 'SG\\.', URL_SAFE, 16, {
    tail: '(?:\\.[A-Za-z0-9_-]{0,4096})?',
    extend: '[A-Za-z0-9_.-]',
  }),
  prefixed('mailgun-key', ['key-'], 'key-', '[a-f0-9]', 32, { tail: '(?![A-Za-z0-9])' }),
  {
    // `<32 hex>-us6`: the key before the data-center suffix is taken back.
    name: 'mailchimp-key',
    pattern: '(?<=(?<![A-Za-z0-9])[0-9a-f]{32})-us[0-9]{1,2}(?![A-Za-z0-9])',
    triggers: ['-us'],
    extendBack: { chars: '[0-9a-f]', max: 32 },
  },
  // Payment and commerce
  prefixed(
    'stripe-key',
    ['sk_live_', 'sk_test_', 'rk_live_', 'rk_test_', 'pk_live_', 'pk_test_'],
    '(?:sk|rk|pk)_(?:live|test)_',
    ALNUM,
    4,
  ),
  prefixed('stripe-webhook-secret', ['whsec_'], 'whsec_', ALNUM, 6),
  prefixed('shopify-token', ['shpat_', 'shpca_', 'shppa_', 'shpss_'], 'shp(?:at|ca|pa|ss)_', ALNUM, 8),
  prefixed(
    'square-token',
    ['sq0atp-', 'sq0csp-', 'sq0idp-', 'EAAA'],
    // Not inside base64 data (`.../EAAAoBUA...` of a wasm blob).
    '(?<![0-9+/])(?:sq0(?:atp|csp|idp)-|EAAA)',
    '[A-Za-z0-9_+=-]',
    16,
  ),
  {
    name: 'braintree-token',
    pattern: 'access_token\\$(?:production|sandbox)\\$[0-9a-z]{16}\\$[0-9a-f]{8,32}',
    triggers: ['access_token$'],
    extend: '[0-9a-f]',
  },
  prefixed('flutterwave-key', ['FLWSECK', 'FLWPUBK'], 'FLW(?:SECK|PUBK)(?:_TEST)?-', ALNUM, 8, {
    tail: '(?:-X)?',
  }),
  prefixed(
    'plaid-token',
    ['access-sandbox-', 'access-development-', 'access-production-'],
    'access-(?:sandbox|development|production)-',
    '[0-9a-f-]',
    8,
  ),
  // Observability and productivity tools
  prefixed('sentry-token', ['sntrys_', 'sntryu_'], 'sntry[su]_', '[A-Za-z0-9_=+/-]', 8),
  prefixed('grafana-token', ['glsa_', 'glc_'], 'gl(?:sa|c)_', '[A-Za-z0-9_+/=]', 16),
  prefixed('new-relic-key', ['NRAK-', 'NRII-', 'NRJS-', 'NRRA-'], 'NR(?:AK|II|JS|RA)-', '[A-Za-z0-9]', 8),
  prefixed('dynatrace-token', ['dt0c01.'], 'dt0c01\\.', '[A-Za-z0-9.]', 8),
  prefixed('linear-notion-figma-key', ['lin_api_', 'ntn_', 'figd_'], '(?:lin_api|ntn|figd)_', URL_SAFE, 16),
  prefixed('notion-secret', ['secret_'], 'secret_', ALNUM, 43, { tail: '(?![A-Za-z0-9_])' }),
  prefixed('postman-contentful-key', ['PMAK-', 'CFPAT-'], '(?:PMAK|CFPAT)-', URL_SAFE, 16),
  prefixed('age-secret-key', ['AGE-SECRET-KEY-1'], 'AGE-SECRET-KEY-1', '[0-9A-Z]', 8),
  {
    // Not after a base64 character nor `base64,`: a JWT starts a token, never the middle of
    // image data or a data URL. Header alone (a clipped token) is enough.
    name: 'jwt',
    pattern:
      '(?:(?<=\\\\[nrt])|(?<![A-Za-z0-9+/=_-]))(?<!base64,)eyJ[A-Za-z0-9_-]{8,4096}(?:\\.[A-Za-z0-9_-]{0,8192}){0,2}',
    triggers: ['eyJ'],
    extend: '[A-Za-z0-9_.-]',
  },
];
