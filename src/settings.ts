// Owns the names of the server settings a message may tell someone to change: each one's
// command-line flag, environment variable and startSandbox() option. A message names a setting
// through these helpers, so whoever reads it finds the spelling they start the sandbox with (a test
// checks that every message of the source naming a flag also names the option). Imports nothing.

interface Setting {
  flag: string;
  env: string;
}

/** The settings messages name, by their startSandbox() option (test/messages.test.ts holds them equal to the CLI's flags and config.ts's variables). */
export const SETTINGS = {
  rateLimit: { flag: '--rate-limit', env: 'SANDBOX_RATE_LIMIT' },
  allowHttpWebhooks: { flag: '--allow-http-webhooks', env: 'SANDBOX_ALLOW_HTTP_WEBHOOKS' },
  allowPrivateUrls: { flag: '--allow-private-urls', env: 'SANDBOX_ALLOW_PRIVATE_URLS' },
  adminToken: { flag: '--admin-token', env: 'SANDBOX_ADMIN_TOKEN' },
  fixtures: { flag: '--fixtures', env: 'SANDBOX_FIXTURES' },
  scenarios: { flag: '--scenario', env: 'SANDBOX_SCENARIOS' },
  publicUrl: { flag: '--public-url', env: 'SANDBOX_PUBLIC_URL' },
  dataFile: { flag: '--data', env: 'SANDBOX_DATA' },
  journalSize: { flag: '--journal-size', env: 'SANDBOX_JOURNAL_SIZE' },
  tokenTtl: { flag: '--token-ttl', env: 'SANDBOX_TOKEN_TTL' },
  logLevel: { flag: '--log-level', env: 'SANDBOX_LOG_LEVEL' },
} as const satisfies Record<string, Setting>;

export type SettingName = keyof typeof SETTINGS;

/**
 * How to give a setting a value, in the three spellings: "--rate-limit 0, SANDBOX_RATE_LIMIT=0 or
 * startSandbox({ rateLimit: 0 })". `true` is a switch: "--allow-http-webhooks,
 * SANDBOX_ALLOW_HTTP_WEBHOOKS=1 or startSandbox({ allowHttpWebhooks: true })".
 */
export function howToSet(name: SettingName, value: string | number | boolean): string {
  const { flag, env } = SETTINGS[name];
  if (value === true) return `${flag}, ${env}=1 or startSandbox({ ${name}: true })`;
  const option = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return `${flag} ${value}, ${env}=${value} or startSandbox({ ${name}: ${option} })`;
}

/** A setting's three names, for a message about the value it was given: "--fixtures (SANDBOX_FIXTURES, startSandbox option fixtures)". */
export function settingNames(name: SettingName): string {
  const { flag, env } = SETTINGS[name];
  return `${flag} (${env}, startSandbox option ${name})`;
}
