import type { ReelAccount } from "../config";
import type { Redis } from "../redis";
import type { AccountStatus } from "./account";
import type { GraphFailureView } from "../graph/failure-view";
import { openToken, sealToken } from "./token-cipher";

/**
 * The accounts Dispatch publishes to, per tenant, in Redis: connected at run time through
 * POST /api/accounts or seeded from REEL_ACCOUNTS at start. Tokens are sealed (token-cipher.ts)
 * and leave this module only to make Graph calls. Each token an account is given (a connection,
 * a refresh) gets a `token_version` drawn from one counter for all accounts, so a worker that saw
 * a token refused, or refreshed it, changes the account only if it still holds that token: a
 * version is never given twice, even to the same account connected again after a disconnect
 * (which deletes the record), by the same tenant or another.
 */

export const connectedAccountKeys = {
  record: (accountId: string) => `reel:account:${accountId}`,
  tenant: (tenantId: string) => `tenant:accounts:${tenantId}`,
  /** Publications waiting for the account to be reconnected. */
  waiting: (accountId: string) => `reel:account:${accountId}:waiting`,
  /** Present while the stored username is recent (USERNAME_TTL_S). */
  usernameRead: (accountId: string) => `reel:account:${accountId}:username-read`,
  /** content_publishing_limit, cached. */
  quota: (accountId: string) => `reel:account:${accountId}:quota`,
  /** zset of publications published through the account, scored by time: when the quota window frees a slot. */
  published: (accountId: string) => `reel:account:${accountId}:published`,
  /** The counter every token_version is drawn from; it outlives any account's record. */
  tokenVersions: "reel:accounts:token-versions",
};

// The next token_version (KEYS[n]: the counter). A new counter starts at the time in ms (ARGV
// given), above any version of the records written when versions counted each account's connections.
const NEXT_TOKEN_VERSION_LUA = `
local function nextTokenVersion(counter, startAt)
  redis.call('SETNX', counter, startAt)
  return string.format('%d', redis.call('INCR', counter))
end`;

/** Long enough that a dashboard's lists do not each ask Graph; short enough that a renamed account shows soon. */
export const USERNAME_TTL_S = 300;

export interface ConnectedAccount {
  tenantId: string;
  accountId: string;
  label: string | null;
  username: string | null;
  /** Undefined when the stored token cannot be opened (the key changed): the account must be connected again. */
  accessToken: string | undefined;
  tokenVersion: number;
  status: AccountStatus;
  error: GraphFailureView | null;
  source: "config" | "api";
  connectedAt: string;
  /** When the token stops working (Meta's long-lived tokens: 60 days); null when it does not expire or nobody said. */
  tokenExpiresAt: string | null;
  /** The Graph host this account publishes through (Instagram Login: graph.instagram.com's); null: GRAPH_URL. */
  graphUrl: string | null;
  /** How it was connected: a pasted token (or REEL_ACCOUNTS), Instagram Login or Facebook Login for Business. */
  login: AccountLogin;
}

export const ACCOUNT_LOGINS = ["token", "instagram", "facebook"] as const;
export type AccountLogin = (typeof ACCOUNT_LOGINS)[number];

/** What a connection through Meta's login knows beyond the token. */
export interface TokenDetails {
  tokenExpiresAt?: string | null;
  graphUrl?: string | null;
  login?: AccountLogin;
}

// Writes a connection unless another tenant holds the account (-1), or, with ARGV[2] == '1', unless it exists (0).
// KEYS: the record, the tenant's set, the version counter. ARGV: tenant, only-if-absent, time (ISO),
// account id, time (ms), then the fields.
const CONNECT = `${NEXT_TOKEN_VERSION_LUA}
local owner = redis.call('HGET', KEYS[1], 'tenant_id')
if owner and owner ~= ARGV[1] then return -1 end
if owner and ARGV[2] == '1' then return 0 end
local version = nextTokenVersion(KEYS[3], ARGV[5])
redis.call('HDEL', KEYS[1], 'error')
redis.call('HSETNX', KEYS[1], 'connected_at', ARGV[3])
redis.call('HSET', KEYS[1], 'token_version', version, unpack(ARGV, 6))
redis.call('SADD', KEYS[2], ARGV[4])
return tonumber(version)`;

// Marks needs_reconnect only while the token that was refused is still the account's.
const MARK = `
if redis.call('HGET', KEYS[1], 'token_version') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'status', 'needs_reconnect', 'error', ARGV[2], 'updated_at', ARGV[3])
return 1`;

// Stores a refreshed token only while the account still has the token it replaces and is connected;
// the version moves on, so a refusal of the old token seen meanwhile marks nothing.
// KEYS: the record, the version counter. ARGV: the version refreshed, token, expiry, time (ISO), time (ms).
const STORE_REFRESHED = `${NEXT_TOKEN_VERSION_LUA}
if redis.call('HGET', KEYS[1], 'token_version') ~= ARGV[1] then return 0 end
if redis.call('HGET', KEYS[1], 'status') ~= 'connected' then return 0 end
redis.call('HSET', KEYS[1], 'token_version', nextTokenVersion(KEYS[2], ARGV[5]),
  'token', ARGV[2], 'token_expires_at', ARGV[3], 'updated_at', ARGV[4])
return 1`;

const DISCONNECT = `
if redis.call('HGET', KEYS[1], 'tenant_id') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[3])
redis.call('SREM', KEYS[2], ARGV[2])
return 1`;

export class ConnectedAccounts {
  private seeding: Promise<void> | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly key: Buffer,
    private readonly seed: readonly ReelAccount[],
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * REEL_ACCOUNTS, once per process: an account not stored yet is added; a seeded one whose token
   * changed in the environment (or cannot be opened) takes the new one. One connected through the
   * API keeps its own token.
   */
  seeded(): Promise<void> {
    this.seeding ??= (async () => {
      for (const account of this.seed) {
        const stored = await this.read(account.accountId);
        if (stored && (stored.source === "api" || stored.accessToken === account.accessToken)) continue;
        await this.write(
          {
            tenantId: account.tenantId,
            accountId: account.accountId,
            accessToken: account.accessToken,
            source: "config",
          },
          !stored,
        );
      }
    })().catch((error) => {
      this.seeding = undefined;
      throw error;
    });
    return this.seeding;
  }

  /** The tenant's account with that id; another tenant's is as unknown as a missing one. */
  async find(tenantId: string, accountId: string): Promise<ConnectedAccount | undefined> {
    await this.seeded();
    const account = await this.read(accountId);
    return account?.tenantId === tenantId ? account : undefined;
  }

  async list(tenantId: string): Promise<ConnectedAccount[]> {
    await this.seeded();
    const ids = (await this.redis.smembers(connectedAccountKeys.tenant(tenantId))).sort();
    const accounts = await Promise.all(ids.map((id) => this.read(id)));
    return accounts.filter((a): a is ConnectedAccount => a?.tenantId === tenantId);
  }

  /** Connects (or reconnects) the account with a token Graph accepted; "taken" when another tenant holds it. */
  async connect(
    input: {
      tenantId: string;
      accountId: string;
      accessToken: string;
      label?: string;
      username?: string | null;
    } & TokenDetails,
  ): Promise<ConnectedAccount | "taken"> {
    await this.seeded();
    const version = await this.write({ ...input, source: "api" }, false);
    if (version < 0) return "taken";
    return (await this.read(input.accountId))!;
  }

  async disconnect(tenantId: string, accountId: string): Promise<boolean> {
    await this.seeded();
    const removed = await this.redis.eval(
      DISCONNECT,
      3,
      connectedAccountKeys.record(accountId),
      connectedAccountKeys.tenant(tenantId),
      connectedAccountKeys.quota(accountId),
      tenantId,
      accountId,
    );
    return removed === 1;
  }

  /** The token sealed for the account, as its record keeps it: for a short stay elsewhere (a login's pending choice). */
  sealFor(accountId: string, token: string): string {
    return sealToken(this.key, accountId, token);
  }

  /** What sealFor sealed; undefined when the key changed meanwhile. */
  openFor(accountId: string, sealed: string): string | undefined {
    return openToken(this.key, accountId, sealed);
  }

  /** Graph refused the token of this version: the account needs reconnecting. False when it was reconnected meanwhile. */
  async markNeedsReconnect(accountId: string, tokenVersion: number, error: GraphFailureView): Promise<boolean> {
    const marked = await this.redis.eval(
      MARK,
      1,
      connectedAccountKeys.record(accountId),
      String(tokenVersion),
      JSON.stringify(error),
      new Date(this.now()).toISOString(),
    );
    return marked === 1;
  }

  /** The account with that id, whichever tenant holds it: for work that starts from the id alone (the token refresh). */
  async findById(accountId: string): Promise<ConnectedAccount | undefined> {
    return this.read(accountId);
  }

  /**
   * Replaces the token of this version with its refresh, sealed; the old one is gone from the
   * record. False when the account was reconnected, disconnected or marked meanwhile.
   */
  async storeRefreshedToken(
    accountId: string,
    tokenVersion: number,
    accessToken: string,
    tokenExpiresAt: string,
  ): Promise<boolean> {
    const now = this.now();
    const stored = await this.redis.eval(
      STORE_REFRESHED,
      2,
      connectedAccountKeys.record(accountId),
      connectedAccountKeys.tokenVersions,
      String(tokenVersion),
      sealToken(this.key, accountId, accessToken),
      tokenExpiresAt,
      new Date(now).toISOString(),
      now,
    );
    return stored === 1;
  }

  /** Remembers the username Graph gave, as read now. */
  async rememberUsername(accountId: string, username: string): Promise<void> {
    await this.redis
      .multi()
      .hset(connectedAccountKeys.record(accountId), "username", username)
      .set(connectedAccountKeys.usernameRead(accountId), "1", "EX", USERNAME_TTL_S)
      .exec();
  }

  private async write(
    input: {
      tenantId: string;
      accountId: string;
      accessToken: string;
      label?: string;
      username?: string | null;
      source: "config" | "api";
    } & TokenDetails,
    onlyIfAbsent: boolean,
  ): Promise<number> {
    const now = this.now();
    const at = new Date(now).toISOString();
    const fields: Record<string, string> = {
      account_id: input.accountId,
      tenant_id: input.tenantId,
      token: sealToken(this.key, input.accountId, input.accessToken),
      status: "connected",
      source: input.source,
      updated_at: at,
      // Written every time: a token pasted after a login must not inherit the login's expiry or host.
      token_expires_at: input.tokenExpiresAt ?? "",
      graph_url: input.graphUrl ?? "",
      login: input.login ?? "token",
    };
    if (input.label !== undefined) fields.label = input.label;
    if (input.username) fields.username = input.username;
    return (await this.redis.eval(
      CONNECT,
      3,
      connectedAccountKeys.record(input.accountId),
      connectedAccountKeys.tenant(input.tenantId),
      connectedAccountKeys.tokenVersions,
      input.tenantId,
      onlyIfAbsent ? "1" : "0",
      at,
      input.accountId,
      now,
      ...Object.entries(fields).flat(),
    )) as number;
  }

  private async read(accountId: string): Promise<ConnectedAccount | undefined> {
    const record = await this.redis.hgetall(connectedAccountKeys.record(accountId));
    if (!record.tenant_id) return undefined;
    const accessToken = record.token ? openToken(this.key, accountId, record.token) : undefined;
    return {
      tenantId: record.tenant_id,
      accountId,
      label: record.label || null,
      username: record.username || null,
      accessToken,
      tokenVersion: Number(record.token_version ?? 0),
      status: accessToken === undefined ? "needs_reconnect" : (record.status as AccountStatus),
      error: record.error
        ? (JSON.parse(record.error) as GraphFailureView)
        : accessToken === undefined
          ? unreadableTokenError()
          : null,
      source: record.source === "config" ? "config" : "api",
      connectedAt: record.connected_at ?? record.updated_at ?? "",
      tokenExpiresAt: record.token_expires_at || null,
      graphUrl: record.graph_url || null,
      login: ACCOUNT_LOGINS.find((login) => login === record.login) ?? "token",
    };
  }
}

function unreadableTokenError(): GraphFailureView {
  const remedy = "Connect the account again with POST /api/accounts.";
  return {
    code: null,
    subcode: null,
    message: "The stored access token cannot be decrypted (ACCOUNTS_SECRET or DATA_DIR's key changed).",
    fbtrace_id: null,
    classification: "reconnect-account",
    headline: "Dispatch can no longer read this account's access token.",
    remedy,
    advice: remedy,
  };
}
