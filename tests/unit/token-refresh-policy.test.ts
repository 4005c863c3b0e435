import { describe, expect, it } from "vitest";
import { daysLeftToReconnect, expiryWords } from "@/components/accounts/token-expiry";
import type { TokenRefresh } from "@/lib/accounts/account";
import type { ConnectedAccount } from "@/lib/accounts/connected-accounts";
import {
  decideTokenRefresh,
  isExpiringSoon,
  LONG_LIVED_LIFETIME_MS,
  tokenRefreshDueAt,
} from "@/lib/accounts/token-refresh/token-refresh-policy";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const BEFORE = 10 * DAY;
const NOW = Date.parse("2026-11-26T00:00:00Z");

/** An Instagram-login account whose token expires `expiresInMs` from NOW. */
function account(expiresInMs: number, overrides: Partial<ConnectedAccount> = {}): ConnectedAccount {
  return {
    tenantId: "acme",
    accountId: "17841400000000101",
    label: null,
    username: "acme",
    accessToken: "IG-long-lived",
    tokenVersion: 3,
    status: "connected",
    error: null,
    source: "api",
    connectedAt: new Date(NOW).toISOString(),
    tokenExpiresAt: new Date(NOW + expiresInMs).toISOString(),
    graphUrl: "https://graph.instagram.com",
    login: "instagram",
    ...overrides,
  };
}

describe("when a long-lived token is due a refresh", () => {
  it("a fresh 60-day token waits until it is within the before-window of its expiry", () => {
    const decision = decideTokenRefresh(account(LONG_LIVED_LIFETIME_MS), BEFORE, NOW);
    expect(decision).toEqual({ kind: "wait", until: NOW + LONG_LIVED_LIFETIME_MS - BEFORE });
  });

  it("inside the before-window and at least 24 h old: refresh now, with the account's token", () => {
    expect(decideTokenRefresh(account(BEFORE - HOUR), BEFORE, NOW)).toEqual({
      kind: "refresh",
      accessToken: "IG-long-lived",
      expiresAt: NOW + BEFORE - HOUR,
    });
    expect(decideTokenRefresh(account(BEFORE), BEFORE, NOW).kind).toBe("refresh");
    expect(decideTokenRefresh(account(BEFORE + 1), BEFORE, NOW).kind).toBe("wait");
  });

  it("a token younger than 24 h waits for its 24th hour, even inside a window wider than its life", () => {
    const wide = 60 * DAY;
    // Issued 23 h ago (its 60 days started then): due 1 h from now.
    const young = account(LONG_LIVED_LIFETIME_MS - 23 * HOUR);
    expect(decideTokenRefresh(young, wide, NOW)).toEqual({ kind: "wait", until: NOW + HOUR });
    expect(tokenRefreshDueAt(NOW + LONG_LIVED_LIFETIME_MS - 25 * HOUR, wide)).toBe(NOW - HOUR);
  });

  it("a token that expired is still sent: Instagram's 190 is what says to reconnect", () => {
    expect(decideTokenRefresh(account(-HOUR), BEFORE, NOW).kind).toBe("refresh");
  });

  it.each<[string, ConnectedAccount | undefined]>([
    ["a pasted token", account(DAY, { login: "token" })],
    ["a REEL_ACCOUNTS token", account(DAY, { source: "config" })],
    ["a token without expiry", account(DAY, { tokenExpiresAt: null })],
    ["an account that needs reconnecting", account(DAY, { status: "needs_reconnect" })],
    ["a token that cannot be opened", account(DAY, { accessToken: undefined })],
    ["an account gone", undefined],
  ])("%s is never refreshed: dropped from the schedule", (_, subject) => {
    expect(decideTokenRefresh(subject, BEFORE, NOW)).toEqual({ kind: "drop" });
  });

  it("expiring soon means within 7 days", () => {
    expect(isExpiringSoon(NOW + 7 * DAY, NOW)).toBe(true);
    expect(isExpiringSoon(NOW + 7 * DAY + 1, NOW)).toBe(false);
  });
});

describe("the dashboard's 'expires in N days — reconnect'", () => {
  const view = (
    expiresInMs: number | null,
    status: "connected" | "needs_reconnect" = "connected",
    tokenRefresh: TokenRefresh = "none",
  ) => ({
    status,
    token_expires_at: expiresInMs === null ? null : new Date(NOW + expiresInMs).toISOString(),
    token_refresh: tokenRefresh,
  });

  it("counts whole days left within 7 days of the expiry of a token Dispatch does not refresh, 0 once it has expired", () => {
    expect(daysLeftToReconnect(view(7 * DAY), NOW)).toBe(7);
    expect(daysLeftToReconnect(view(2 * DAY + HOUR), NOW)).toBe(3);
    expect(daysLeftToReconnect(view(HOUR), NOW)).toBe(1);
    expect(daysLeftToReconnect(view(-HOUR), NOW)).toBe(0);
    expect(expiryWords(0)).toBe("has expired");
    expect(expiryWords(1)).toBe("expires in 1 day");
    expect(expiryWords(3)).toBe("expires in 3 days");
  });

  it("says nothing further off, without an expiry, or when the account already needs reconnecting", () => {
    expect(daysLeftToReconnect(view(7 * DAY + 1), NOW)).toBeNull();
    expect(daysLeftToReconnect(view(null), NOW)).toBeNull();
    expect(daysLeftToReconnect(view(DAY, "needs_reconnect"), NOW)).toBeNull();
  });

  it("asks to reconnect a token Dispatch refreshes only once its refreshes failed, or it has expired", () => {
    // TOKEN_REFRESH_BEFORE_S under 7 days: the refresh is still to come.
    expect(daysLeftToReconnect(view(3 * DAY, "connected", "automatic"), NOW)).toBeNull();
    expect(daysLeftToReconnect(view(3 * DAY, "connected", "failing"), NOW)).toBe(3);
    expect(daysLeftToReconnect(view(-HOUR, "connected", "automatic"), NOW)).toBe(0);
  });
});
