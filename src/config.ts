import { z } from 'zod';
import { canonicalIpEntry } from './auth/ip-allow-list.js';
import { DEFAULT_SHARED_DIR } from './db/embedded-root.js';

/**
 * How long the instance waits on a database that does not answer, each step of a request's wait:
 * a new connection's handshake, a free pool slot, a query's next byte. Together they keep a request
 * under about 5 s when PostgreSQL goes silent (docs/failure-behaviour.md).
 */
export const DATABASE_TIMEOUT_DEFAULTS = {
  connectTimeoutMs: 3000,
  acquireTimeoutMs: 4000,
  silenceMs: 2000,
} as const;

/** Connections of the pipelined key lookups beside the pool (src/db/pipelined-reads.ts). */
export const DATABASE_PIPELINE_CONNECTIONS_DEFAULT = 1;

/** The Standard Webhooks retry schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_SECONDS: readonly number[] = [5, 300, 1800, 7200, 18_000, 36_000, 36_000];

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const MB = 1024 * 1024;
/** A size in bytes from 1 KiB to `maxMb` MB. */
const bytes = (maxMb: number, defaultMb: number) =>
  z.coerce
    .number()
    .int()
    .min(1024)
    .max(maxMb * MB)
    .default(defaultMb * MB);

/** Express's names for whole ranges: 127.0.0.0/8 and ::1; link-local; private and unique-local. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUST_PROXY: `false` (default: the socket's address is the client's), `true` (one proxy in front,
 * whatever its address: the right-most X-Forwarded-For entry, the address that proxy saw; express's
 * `1`), or the proxies as a comma-separated list of addresses, CIDR ranges and range names: the
 * client is then the right-most X-Forwarded-For entry that is not one of them. Neither form ever
 * takes an entry a client wrote itself further left.
 */
const trustProxy = z.string().transform((text, ctx): false | 1 | string[] => {
  const value = text.trim().toLowerCase();
  if (value === 'true' || value === '1') return 1;
  if (value === 'false' || value === '0') return false;
  const entries: string[] = [];
  for (const entry of value.split(',').map((e) => e.trim())) {
    if (entry === '') continue;
    if (PROXY_RANGE_NAMES.includes(entry)) {
      entries.push(entry);
      continue;
    }
    const parsed = canonicalIpEntry(entry);
    if ('error' in parsed) {
      ctx.addIssue({
        code: 'custom',
        message: `${entry}: ${parsed.error}; or one of true, false, ${PROXY_RANGE_NAMES.join(', ')}`,
      });
      return z.NEVER;
    }
    entries.push(parsed.entry);
  }
  return entries.length > 0 ? entries : false;
});

const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** External PostgreSQL. Without it an embedded PostgreSQL is started under DATA_DIR. */
  DATABASE_URL: z.string().url().optional(),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  /**
   * Streaming standbys of DATABASE_URL, comma-separated: calls lists, search and statistics read
   * from a healthy one (src/db/replicas.ts). Empty: every read goes to the primary.
   */
  DATABASE_REPLICA_URLS: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((url) => url.trim())
        .filter((url) => url !== ''),
    )
    .pipe(z.array(z.string().url())),
  /** A replica further behind the primary than this leaves the rotation. */
  REPLICA_MAX_LAG_MS: z.coerce.number().int().min(100).max(600_000).default(2000),
  /** A new connection that has not finished its handshake after this long fails (503). */
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(60_000)
    .default(DATABASE_TIMEOUT_DEFAULTS.connectTimeoutMs),
  /** A request that found no free pool connection (nor could open one) after this long fails (503). */
  DATABASE_ACQUIRE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(DATABASE_TIMEOUT_DEFAULTS.acquireTimeoutMs),
  /**
   * A query that has had no byte back for this long is checked from a fresh connection; if its
   * answer was lost, or the database does not answer at all, the connection is dropped (503).
   * 0 turns the check off.
   */
  DATABASE_SILENCE_MS: z.coerce
    .number()
    .int()
    .refine((ms) => ms === 0 || (ms >= 100 && ms <= 600_000), 'must be 0 (off) or 100..600000')
    .default(DATABASE_TIMEOUT_DEFAULTS.silenceMs),
  /**
   * The hot lookups (the key check without the read cache, the knowledge-base search) run as named
   * prepared statements. Turn off behind a pooler that cannot carry them (PgBouncer in transaction
   * mode before 1.21).
   */
  DATABASE_PREPARED_STATEMENTS: bool.default(true),
  /**
   * Connections beside the pool that carry the key lookups of requests the read cache does not
   * answer, pipelined (many queries in flight on each). 0: they take pool connections like any
   * query. Not used with DATABASE_PREPARED_STATEMENTS=false.
   */
  DATABASE_PIPELINE_CONNECTIONS: z.coerce.number().int().min(0).max(16).default(DATABASE_PIPELINE_CONNECTIONS_DEFAULT),
  /**
   * The read cache's one listening connection (LISTEN/NOTIFY) goes here instead of DATABASE_URL: a
   * direct or session-mode connection to the same database, where DATABASE_URL is a pooler in
   * transaction mode (which cannot carry LISTEN). Requires DATABASE_URL.
   */
  DATABASE_LISTEN_URL: z.string().url().optional(),
  DATA_DIR: z.string().default('./.data'),
  /** 0: a free port chosen at each start (logged), for runs side by side; the CLI finds it in the cluster. */
  EMBEDDED_PG_PORT: z.coerce.number().int().min(0).max(65535).default(54329),
  /**
   * Running as root from a directory the postgres system user cannot enter (mode 0700), the
   * embedded PostgreSQL's binaries and cluster are kept here instead (one cluster per DATA_DIR).
   */
  EMBEDDED_PG_SHARED_DIR: z.string().default(DEFAULT_SHARED_DIR),
  /** HS256 secret for dashboard tokens. Generated and kept in DATA_DIR when absent outside production. */
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  /**
   * 64 hex characters (32 bytes): the AES-256-GCM key that seals stored secrets (a phone number's SIP
   * credentials). Generated and kept in DATA_DIR when absent outside production, as JWT_SECRET is.
   */
  SECRETS_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hexadecimal characters (openssl rand -hex 32)')
    .optional(),
  /** PEM public key; when set, tokens are verified with RS256/ES256 instead of HS256. */
  JWT_PUBLIC_KEY: z.string().optional(),
  JWT_ISSUER: z.string().optional(),
  JWT_AUDIENCE: z.string().optional(),
  /**
   * Keep keys, memberships and agents in memory, dropped on every change PostgreSQL announces
   * (LISTEN/NOTIFY). Turn off where no connection can LISTEN: DATABASE_URL is a pooler in
   * transaction mode and there is no DATABASE_LISTEN_URL.
   */
  READ_CACHE_ENABLED: bool.default(true),
  /** Longest wait between two attempts to re-open the cache's listening connection after a loss. */
  READ_CACHE_RECONNECT_MAX_MS: z.coerce.number().int().min(10).max(60_000).default(2000),
  /** On SIGTERM/SIGINT: how long in-flight requests may take before connections are cut and the process exits. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  /**
   * How long an instance keeps serving from its cache without hearing its own heartbeat back, and so
   * the longest a credential or agent change waits for an instance that does not acknowledge it.
   */
  CACHE_LEASE_MS: z.coerce.number().int().min(100).max(60_000).default(2000),
  /** Shared rate-limit counters for several instances. */
  REDIS_URL: z.string().url().optional(),
  BODY_LIMIT: z.string().default('1mb'),
  /** Which peers may name the client in X-Forwarded-For (see `trustProxy`); key allow-lists depend on it. */
  TRUST_PROXY: trustProxy.default(false),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: bool.default(false),
  /** Whole-request limit of an outgoing request (webhooks, http_request tools): connect, send, answer. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(50).max(30_000).default(5000),
  /**
   * Delays before the automatic retries of a delivery whose target turned retries on (comma-separated
   * seconds, one per retry). The default is the Standard Webhooks schedule: 7 retries, 8 attempts.
   */
  WEBHOOK_RETRY_SCHEDULE_SECONDS: z
    .string()
    .transform((value) => value.split(',').map((part) => Number(part.trim())))
    .pipe(
      z
        .array(
          z.number().positive('each delay must be a positive number of seconds').max(86_400, 'at most 86400 seconds'),
        )
        .min(1)
        .max(20, 'at most 20 retries'),
    )
    .default(() => [...DEFAULT_WEBHOOK_RETRY_SCHEDULE_SECONDS]),
  /** Largest knowledge-base upload in bytes (413 beyond, while it streams in). Default 20 MB. */
  KB_MAX_FILE_BYTES: bytes(1024, 20),
  /** Most pages a knowledge-base PDF may have (failed with too_many_pages beyond). */
  KB_MAX_PDF_PAGES: z.coerce.number().int().min(1).max(100_000).default(500),
  /** Largest web page a knowledge-base web source reads, in bytes (a per-page error beyond). */
  KB_MAX_PAGE_BYTES: bytes(100, 5),
  /** Whole-request limit of one page fetch of a web source (connect, answer, body). */
  KB_FETCH_TIMEOUT_MS: z.coerce.number().int().min(50).max(120_000).default(15_000),
  /** Run background workers (webhooks, knowledge base, retention) in this process. */
  WORKERS_ENABLED: bool.default(true),
  /** Days an audit-log entry is kept; a daily job deletes older ones. */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(365),
  /** Outbound calls one agent may have in progress at once, over all its campaigns and single jobs. */
  OUTBOUND_MAX_CONCURRENT_PER_AGENT: z.coerce.number().int().min(1).max(1000).default(10),
  /** The URL clients use to reach this API (e.g. https://api.example.com): the OpenAPI document's server. */
  PUBLIC_BASE_URL: z.string().url().optional(),
  /**
   * When set, GET /metrics requires `Authorization: Bearer <METRICS_TOKEN>`. In production it is
   * required for /metrics to answer at all (401 without it).
   */
  METRICS_TOKEN: z.string().min(16).optional(),
  /**
   * Which operations the MCP server at /mcp offers as tools: `all`, or `read` (the GETs, and the POSTs
   * that need only a `:read` permission). A caller whose permissions are all `:read` sees only the
   * read tools either way.
   */
  MCP_TOOLS: z.enum(['read', 'all']).default('all'),
  /**
   * Drills and tests only: a job whose worker vanished is retried after this many seconds (default:
   * each queue's own expiry, one to five minutes).
   */
  JOB_EXPIRE_SECONDS: z.coerce.number().int().min(1).max(3600).optional(),
  APP_VERSION: z.string().default('1.0.0'),
  APP_COMMIT: z.string().default('unknown'),
});

export type Config = z.infer<typeof configSchema>;

/** Parses the environment once at boot; throws with every problem listed. */
export function parseConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = configSchema.safeParse(cleaned);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  const config = result.data;
  if (config.NODE_ENV === 'production' && !config.JWT_SECRET && !config.JWT_PUBLIC_KEY) {
    throw new Error('Invalid configuration: JWT_SECRET or JWT_PUBLIC_KEY is required in production');
  }
  if (config.DATABASE_LISTEN_URL && !config.DATABASE_URL) {
    throw new Error(
      'Invalid configuration: DATABASE_LISTEN_URL requires DATABASE_URL (the embedded database needs neither)',
    );
  }
  return config;
}

/**
 * Settings that start but deserve a second look, one log line each. `TRUST_PROXY=true` in production
 * takes the right-most X-Forwarded-For entry from whatever connects, so a client that reaches the
 * server directly (not through the proxy) names its own address, which key allow-lists then trust.
 */
export function configWarnings(config: Config): string[] {
  const warnings: string[] = [];
  if (config.NODE_ENV === 'production' && config.TRUST_PROXY === 1) {
    warnings.push(
      'TRUST_PROXY=true trusts X-Forwarded-For from any peer: a client that reaches this server directly can ' +
        "choose the address API keys' allowed_ips check. Set TRUST_PROXY to your proxies' addresses or CIDRs " +
        '(e.g. TRUST_PROXY=10.0.0.0/8), or to loopback/uniquelocal',
    );
  }
  if (config.NODE_ENV === 'production' && !config.SECRETS_KEY) {
    warnings.push(
      'SECRETS_KEY is not set: phone numbers cannot store SIP credentials (503) until it is ' +
        '(64 hexadecimal characters, openssl rand -hex 32)',
    );
  }
  return warnings;
}
