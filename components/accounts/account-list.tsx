"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { AccountView } from "@/lib/accounts/account";
import { errorMessage, fetchJson } from "../api";
import { formatNumber, formatTime } from "../format";
import { Badge } from "../ui/badge";
import { Button } from "../ui/button";
import { Card, CardBody, CardHeader } from "../ui/card";
import { cx } from "../ui/cx";
import { Alert, Empty, Loading } from "../ui/states";
import { Time, useNow } from "../ui/time";
import { fetchAccounts, reelKeys } from "../reels/queries";
import { ConnectAccountForm } from "./connect-account-form";
import { daysLeftToReconnect, expiryWords } from "./token-expiry";

export function AccountList() {
  const accounts = useQuery({ queryKey: reelKeys.accounts, queryFn: fetchAccounts, refetchInterval: 30_000 });
  if (accounts.isPending) return <Loading label="Loading accounts…" />;
  if (accounts.isError) return <Alert title="Could not load accounts">{errorMessage(accounts.error)}</Alert>;
  if (accounts.data.data.length === 0) {
    return (
      <Card>
        <Empty title="No accounts yet">Connect one to publish reels.</Empty>
      </Card>
    );
  }
  return (
    <ul className="space-y-4" aria-label="Connected accounts">
      {accounts.data.data.map((account) => (
        <li key={account.account_id}>
          <AccountCard account={account} />
        </li>
      ))}
    </ul>
  );
}

function AccountCard({ account }: { account: AccountView }) {
  const queryClient = useQueryClient();
  const [reconnecting, setReconnecting] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const disconnect = useMutation({
    mutationFn: () => fetchJson<void>(`/v1/accounts/${encodeURIComponent(account.account_id)}`, { method: "DELETE" }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: reelKeys.accounts }),
  });
  const needsReconnect = account.status === "needs_reconnect";
  const now = useNow();
  const rateLimited =
    !needsReconnect && account.rate_limited_until !== null && Date.parse(account.rate_limited_until) > now;
  const name = account.username ? `@${account.username}` : account.account_id;

  return (
    <Card id={`account-${account.account_id}`} data-testid="account" data-account-id={account.account_id}>
      <CardHeader
        title={
          <span className="flex flex-wrap items-center gap-2">
            {account.label ?? name}
            <Badge tone={needsReconnect ? "warning" : "success"} data-testid="account-status">
              {needsReconnect ? "Needs reconnect" : "Connected"}
            </Badge>
            {rateLimited && (
              <Badge tone="warning" data-testid="account-rate-limited">
                Rate-limited until {formatTime(account.rate_limited_until)}
              </Badge>
            )}
            {account.sandbox && <Badge>Sandbox</Badge>}
          </span>
        }
        description={
          <>
            {account.label ? `${name} · ` : ""}
            <span className="font-mono">{account.account_id}</span>
            <TokenLine account={account} />
          </>
        }
        actions={
          <>
            {!needsReconnect && !reconnecting && (
              <Button variant="secondary" size="sm" onClick={() => setReconnecting(true)}>
                New token
              </Button>
            )}
            <Button
              variant="danger"
              size="sm"
              loading={disconnect.isPending}
              onClick={() => (confirming ? disconnect.mutate() : setConfirming(true))}
              onBlur={() => setConfirming(false)}
            >
              {confirming ? "Really disconnect?" : "Disconnect"}
            </Button>
          </>
        }
      />
      <CardBody className="space-y-4">
        {needsReconnect && (
          <Alert tone="warning" title="Reconnect this account">
            <p>
              {account.error?.headline ?? "Graph refused its access token."} Its reels wait until it is reconnected,
              then go on by themselves.
            </p>
            {!reconnecting && (
              <Button className="mt-3" size="sm" variant="secondary" onClick={() => setReconnecting(true)}>
                Reconnect
              </Button>
            )}
          </Alert>
        )}
        {rateLimited && (
          <Alert tone="info" title={`Rate-limited until ${formatTime(account.rate_limited_until)}`}>
            <p>
              Graph said this account (or the app) used up its calls for now. Its reels wait and go on by themselves
              after that time.
            </p>
          </Alert>
        )}
        {reconnecting && <ConnectAccountForm accountId={account.account_id} onDone={() => setReconnecting(false)} />}
        <QuotaBar quota={account.quota} />
        {disconnect.isError && <Alert>{errorMessage(disconnect.error)}</Alert>}
      </CardBody>
    </Card>
  );
}

const LOGIN_NAMES: Record<AccountView["login"], string> = {
  instagram: "Connected with Instagram",
  facebook: "Connected with Facebook",
  token: "Access token",
};

/** How the account was connected and when its token stops working, so a person knows before it does. */
function TokenLine({ account }: { account: AccountView }) {
  const how = LOGIN_NAMES[account.login];
  const daysLeft = daysLeftToReconnect(account, useNow());
  return (
    <span className="block" data-testid="token-expiry">
      {how} ·{" "}
      {account.token_expires_at ? (
        <>
          token expires <Time iso={account.token_expires_at} />
        </>
      ) : account.login === "facebook" ? (
        // A Page token got through a long-lived user token: Meta gives it no expiry.
        "token does not expire"
      ) : (
        "token expiry not known"
      )}
      {daysLeft !== null && (
        <span className="font-medium text-amber-700 dark:text-amber-300" data-testid="token-expiring">
          {" "}
          · {expiryWords(daysLeft)} — reconnect
        </span>
      )}
    </span>
  );
}

function QuotaBar({ quota }: { quota: AccountView["quota"] }) {
  const { quota_usage: used, quota_total: total, quota_duration: duration } = quota;
  const hours = duration ? Math.round(duration / 3600) : 24;
  if (used === null || total === null)
    return <p className="text-sm text-zinc-500 dark:text-zinc-400">Publishing quota: not known right now.</p>;
  const share = total > 0 ? Math.min(1, used / total) : 1;
  return (
    <div>
      <div className="flex items-baseline justify-between text-sm">
        <span className="text-zinc-600 dark:text-zinc-400">Posts in the last {hours} h</span>
        <span className="font-medium text-zinc-900 tabular-nums dark:text-zinc-100" data-testid="quota">
          {formatNumber(used)} / {formatNumber(total)}
        </span>
      </div>
      <div
        role="meter"
        aria-label={`Publishing quota: ${used} of ${total} posts in ${hours} h`}
        aria-valuemin={0}
        aria-valuemax={total}
        aria-valuenow={used}
        className="mt-1.5 h-2 overflow-hidden rounded-full bg-zinc-100 dark:bg-zinc-800"
      >
        <div
          className={cx(
            "h-full rounded-full",
            share >= 1 ? "bg-red-500" : share >= 0.8 ? "bg-amber-500" : "bg-emerald-500",
          )}
          style={{ width: `${share * 100}%` }}
        />
      </div>
      {share >= 1 && (
        <p className="mt-1 text-xs text-zinc-500 dark:text-zinc-400">
          Used up: new reels wait until the window frees a slot.
        </p>
      )}
    </div>
  );
}
