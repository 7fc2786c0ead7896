/**
 * Secret-shaped samples, assembled at run time so no scanner mistakes the repository for a
 * leak. None of them is a real credential.
 */
export const SECRET_SAMPLES: Readonly<Record<string, string>> = {
  'GitHub classic token (ghp_)': `ghp_${'A1b2C3d4'.repeat(5)}`,
  'GitHub OAuth token (gho_)': `gho_${'Z9y8X7w6'.repeat(5)}`,
  'GitHub fine-grained token (github_pat_)': `github_pat_${'11ABCDEFG0'.repeat(3)}_${'xYz123'.repeat(6)}`,
  'Slack bot token (xoxb-)': `xoxb-${'1234567890'}-${'abcdefABCDEF1234'}`,
  'Slack user token (xoxp-)': `xoxp-${'9876543210'}-${'QWERTYqwerty5678'}`,
  'AWS access key id (AKIA)': `AKIA${'IOSFODNN7EXAMPLE'}`,
  'OpenAI-style key (sk-)': `sk-${'proj'}-${'Ab3De6Gh9Jk2Mn5Pq8St1Vw4'}`,
  JWT: `${'eyJhbGciOiJIUzI1NiJ9'}.${'eyJzdWIiOiIxMjM0NTY3ODkwIn0'}.${'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'}`,
  'PEM private key block': `-----BEGIN ${'PRIVATE KEY'}-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END ${'PRIVATE KEY'}-----`,
  'high-entropy string (40 chars base64)': ['wJalrXUtnFEMI', 'K7MDENGbPxRfi', 'CYzQ8m2Lp4Vt9a'].join(''),
  'high-entropy hex (40 chars)': ['3f9a1c7e5b2d', '8e4f6a0c9b1d', '7e3a5c2f8b4d6e0a'].join(''),
  'URL with a password': `https://user:${'hunter2hunter2'}@example.com/x`,
};

/** Values that must not be mistaken for secrets. */
export const NOT_SECRETS: readonly string[] = [
  'placeholder-token-0000',
  'clibroker-placeholder-token',
  '11111111-2222-3333-4444-555555555555',
  'https://management.azure.com/.default',
  '/usr/local/share/azure-cli/extensions/resource-graph',
  'acme/app',
  'task-list-for-the-sprint-planning-meeting',
  'json',
  'disk_usage_report',
  'ghp_',
];
