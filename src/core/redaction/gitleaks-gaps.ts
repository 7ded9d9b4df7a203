import { prefixed, type RedactionRule, urlAtGate } from './redaction-rule.js';
import { acceptKeyValue } from './redaction-values.js';

/**
 * secretlint's assignment before an id: the key's closing quote (JSON-escaped at any depth),
 * `:`, `=`, `:=` or `=>`, and the value's opening quote. Key and assignment are kept.
 */
const ID_ASSIGNMENT = `\\\\{0,7}["']?[ \\t]{0,16}(?::=|=>|:|=(?!=))[ \\t]{0,16}(?:\\\\{0,7}["'])?`;
const GUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9a-z-])';

/**
 * secretlint's identifiers that are no secret by their shape, only by the key that names them
 * (its aws and azure rules): an AWS account id (12 digits) and Azure tenant and client ids
 * (GUIDs).
 */
const NAMED_ID_RULES: readonly RedactionRule[] = [
  {
    // `AWS_ACCOUNT_ID=1234-5678-9012`, `"awsAccountId": "123456789012"`, `account: ...`.
    name: 'aws-account-id',
    pattern: `(?i)(account(?:[_-]?id)?)(${ID_ASSIGNMENT})[0-9]{4}-?[0-9]{4}-?[0-9]{4}(?![0-9])`,
    triggers: ['account'],
  },
  {
    // `AZURE_TENANT_ID=<guid>`, `ad_tenant_id: "<guid>"` (`azure` or `ad` before it).
    name: 'azure-tenant-id',
    pattern: `(?i)(?<=(?:azure|ad)[_-]?)(tenant[_-]?id)(${ID_ASSIGNMENT})${GUID}`,
    triggers: ['tenant'],
  },
  {
    // `AZURE_CLIENT_ID=<guid>`, `clientId: '<guid>'`: an OAuth client id in GUID form.
    name: 'azure-client-id',
    pattern: `(?i)(client[_-]?id)(${ID_ASSIGNMENT})${GUID}`,
    triggers: ['client'],
  },
];

/**
 * gitleaks shapes that its generated rules (`gitleaks-families.ts`) cannot take, because the
 * secret starts with no literal, and formats of secretlint's preset that gitleaks lacks:
 * written by hand, each anchored on the literal it has.
 */
export const GITLEAKS_GAP_RULES: readonly RedactionRule[] = [
  ...NAMED_ID_RULES,
  {
    // secretlint's SendGrid shape, `SG.<22>.<43>`, is a key even glued to a word before it
    // (`somSG.…`), where the prefixed rule wants a boundary.
    name: 'sendgrid-key-exact',
    pattern: 'SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}',
    triggers: ['SG.'],
    extend: '[A-Za-z0-9_.-]',
  },
  // `sgp_<16 hex or local>_<40 hex>` or `sgp_<40 hex>` (gitleaks' third shape, 40 bare hex,
  // is a git SHA as often: left alone).
  {
    // A GitHub App installation token in its JWT form, `ghs_<app id>_eyJ...` (secretlint).
    name: 'github-app-jwt-token',
    pattern: '(?<![A-Za-z0-9])ghs_[0-9]{1,12}_eyJ[A-Za-z0-9_-]{8,4096}(?:\\.[A-Za-z0-9_-]{0,4096}){0,2}',
    triggers: ['ghs_'],
    extend: '[A-Za-z0-9_.-]',
  },
  // secretlint's preset: Tailscale, Vercel, Cloudflare API tokens.
  prefixed('tailscale-key', ['tskey-'], 'tskey-(?:api|auth|client|scim|webhook|future)-', '[A-Za-z0-9-]', 16),
  prefixed('vercel-token', ['vcp_', 'vci_', 'vca_', 'vcr_', 'vck_'], 'vc[pciark]_', '[A-Za-z0-9]', 24),
  prefixed('cloudflare-api-token', ['cfut_', 'cfk_'], 'cf(?:ut|k)_', '[A-Za-z0-9]', 32),
  prefixed('sourcegraph-token', ['sgp_'], 'sgp_(?:[a-fA-F0-9]{16}_|local_)?', '[a-fA-F0-9]', 40),
  {
    // `<6>_<29>_mmk`: the key before its suffix is taken back.
    name: 'maxmind-license-key',
    pattern: '(?<=(?<![A-Za-z0-9_])[A-Za-z0-9]{6}_[A-Za-z0-9]{29})_mmk(?![A-Za-z0-9_])',
    triggers: ['_mmk'],
    extendBack: { chars: '[A-Za-z0-9_]', max: 36 },
  },
  {
    // A Facebook app token, `<app id>|<secret>` (or `%7C`-free `%`): the id is taken back.
    name: 'facebook-app-token',
    pattern: '(?<=(?<![0-9])[0-9]{15,16})(?:\\||%)[0-9A-Za-z_-]{27,40}(?![0-9A-Za-z_-])',
    triggers: ['|', '%'],
    extendBack: { chars: '[0-9]', max: 16 },
  },
  {
    // NuGet.config: `<add key="ClearTextPassword" value="..." />`: the key and `value=` stay.
    name: 'xml-key-value',
    pattern:
      '(?i)(<add[ \\t]{1,16}key=\\\\{0,7}"[A-Za-z_.:-]{0,64}(?:password|secret|token|apikey|api_key)[A-Za-z_.:-]{0,64}\\\\{0,7}"[ \\t]{0,64}value)(=)(?:\\\\{1,7}"[^"\\\\\\r\\n]{1,4096}\\\\{1,7}"|"[^"\\r\\n]{1,4096}")',
    triggers: ['<add'],
    accept: acceptKeyValue,
  },
  {
    // Sidekiq Enterprise credentials, `https://<8 hex>:<8 hex>@gems.contribsys.com`: the user
    // is a key too.
    name: 'sidekiq-credentials',
    pattern: `(://)[a-fA-F0-9]{8}:[a-fA-F0-9]{8}(@(?:gems|enterprise)\\.contribsys\\.com)`,
    triggers: ['://'],
    gate: urlAtGate,
  },
];
