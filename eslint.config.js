// Type-aware lint: the rules that matter most here are the promise rules (a floating promise in a
// server loses errors and acknowledged writes), so they run with full type information.
import tseslint from 'typescript-eslint';

// Import boundaries: each library with a wide surface (a native HTTP server, gRPC, a database
// driver, the logger) is imported by the one module that wraps it, and everything else goes
// through that module, so swapping or upgrading a library touches one folder. The table is the
// rule; docs/architecture.md ("Import boundaries") shows it. Tests, benches and load tests may
// import anything.
export const BOUNDARIES = [
  // The HTTP core's transports: each library in its adapter, services use src/core/http.
  { module: 'uWebSockets.js', allowed: ['src/core/http/uws.ts'], use: 'src/core/http' },
  { module: 'ws', allowed: ['src/core/http/node.ts'], use: 'src/core/http (Router.ws)' },
  { module: '@grpc/grpc-js', allowed: ['src/core/grpc/**'], use: 'src/core/grpc' },
  {
    module: 'ioredis',
    allowed: ['src/ratelimit/store/redis*.ts'],
    use: 'src/ratelimit/store/redis-client.ts',
  },
  {
    module: 'lmdb',
    // Storage modules: files named for what they store.
    allowed: ['src/**/*store.ts', 'src/**/storage.ts', 'src/**/db.ts', 'src/streams/log/lmdb.ts'],
    use: 'a store module (src/automation/db.ts, src/streams/storage.ts, *store.ts)',
  },
  {
    module: '@nats-io',
    // The JetStream backend's adapters: the log, the consumer-group state, the shared connection.
    allowed: ['src/streams/log/jetstream*.ts', 'src/streams/groups/*jetstream*.ts', 'src/streams/nats/**'],
    use: 'the JetStream adapters (src/streams/log/jetstream.ts, src/streams/nats/connection.ts)',
  },
  {
    module: 'pg',
    // The PostgreSQL adapter of the automation service: pool, migrations, stores, queue, blobs.
    allowed: ['src/automation/pg/**'],
    use: 'src/automation/pg (PgDatabase in pool.ts)',
  },
  { module: 'pino', allowed: ['src/core/log.ts'], use: 'src/core/log.ts (createLogger, type Logger)' },
  {
    module: 'prom-client',
    // The services' metrics registry, and the rate limit statistics' Prometheus renderer.
    allowed: ['src/core/observe/metrics.ts', 'src/ratelimit/stats/outputs/prom-render.ts'],
    use: 'src/core/observe (MetricsRegistry: counter, gauge, histogram)',
  },
  {
    module: '@opentelemetry',
    // The tracer providers and OTLP exporters; the rate limit decider keeps its own span wrapper.
    allowed: ['src/core/tracing/**', 'src/ratelimit/tracing.ts'],
    use: 'src/core/tracing (createTracing, TraceSpan)',
  },
  // The email trigger's adapters: the SMTP listener, the MIME reader, the reply relay.
  {
    module: 'smtp-server',
    allowed: ['src/automation/triggers/email/smtp-listener.ts'],
    use: 'src/automation/triggers/email/smtp-listener.ts (startSmtpListener)',
  },
  {
    module: 'mailparser',
    allowed: ['src/automation/triggers/email/mime.ts'],
    use: 'src/automation/triggers/email/mime.ts (readMessage)',
  },
  {
    module: 'nodemailer',
    allowed: ['src/automation/triggers/email/relay.ts'],
    use: 'src/automation/triggers/email/relay.ts (createRelay)',
  },
  {
    module: 'croner',
    allowed: ['src/automation/triggers/cron/expression.ts'],
    use: 'src/automation/triggers/cron/expression.ts (CronExpression)',
  },
  {
    module: 'ajv',
    allowed: ['src/automation/schemas/compiler.ts'],
    use: 'src/automation/schemas/compiler.ts (one dialect choice, one bounded cache)',
  },
];

// Ways a string becomes HTML in a page; test/lint/console-text.test.ts checks the rule holds.
export const CONSOLE_NO_HTML = [
  {
    selector: "JSXAttribute[name.name='dangerouslySetInnerHTML']",
    message: 'the console renders API values as text; dangerouslySetInnerHTML is not allowed',
  },
  {
    selector: "MemberExpression[property.name=/^(innerHTML|outerHTML)$/]",
    message: 'the console renders API values as text; use textContent',
  },
  {
    selector: "CallExpression[callee.property.name=/^(insertAdjacentHTML|createContextualFragment|write|writeln)$/]",
    message: 'the console renders API values as text; no HTML parsing from strings',
  },
  {
    selector: "NewExpression[callee.name='DOMParser']",
    message: 'the console renders API values as text; no HTML parsing from strings',
  },
];

// Anchored on the import's start, so a relative path through a folder of the same name (the
// automation service's ./pg/ adapter) is not taken for the library.
const restriction = (b) => ({
  regex: `^${b.module.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(/.*)?$`,
  message: `${b.module} is imported only in ${b.allowed.join(', ')}; use ${b.use}.`,
});

// Rule options do not merge across config objects: the last object matching a file wins. So
// every file of src/ gets all restrictions, and each boundary's allowed files get all but their
// own. The allowed sets do not overlap; if they ever did, the file would get the stricter list.
const boundaryRules = (except) => ({
  '@typescript-eslint/no-restricted-imports': [
    'error',
    { patterns: BOUNDARIES.filter((b) => b !== except).map(restriction) },
  ],
});

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'data/**',
      'bin/**',
      'scripts/*.js',
      '**/*.mjs',
      'eslint.config.js',
      // The built-in automations are plain JS modules run inside the registry's worker pool.
      'automations/**',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's describe/it return promises the runner itself tracks.
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
    },
  },
  { files: ['src/**/*.ts', 'workers/**/*.ts'], rules: boundaryRules(undefined) },
  // The console renders every value from an API as text: no HTML strings into the page, ever.
  { files: ['console/**/*.ts', 'console/**/*.tsx'], rules: { 'no-restricted-syntax': ['error', ...CONSOLE_NO_HTML] } },
  ...BOUNDARIES.map((b) => ({ files: b.allowed, rules: boundaryRules(b) })),
);
