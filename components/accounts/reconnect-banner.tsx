"use client";

import { useQuery } from "@tanstack/react-query";
import { plural } from "../format";
import { fetchAccounts, reelKeys } from "../reels/queries";
import { Alert } from "../ui/states";
import { useNow } from "../ui/time";
import { daysLeftToReconnect, expiryWords } from "./token-expiry";

/**
 * Above the account list: the accounts to reconnect now (a token refused, or one whose refresh was
 * refused) and those whose token runs out within days because it could not be refreshed.
 */
export function ReconnectBanner() {
  const accounts = useQuery({ queryKey: reelKeys.accounts, queryFn: fetchAccounts, refetchInterval: 30_000 });
  const now = useNow();
  const all = accounts.data?.data ?? [];
  const refused = all.filter((a) => a.status === "needs_reconnect");
  const expiring = all.filter((a) => daysLeftToReconnect(a, now) !== null);
  if (refused.length === 0 && expiring.length === 0) return null;
  const name = (a: (typeof all)[number]) => a.label ?? (a.username ? `@${a.username}` : a.account_id);
  return (
    <div className="mb-6" data-testid="reconnect-banner">
      <Alert tone="warning" title={`${plural(refused.length + expiring.length, "account")} to reconnect`}>
        <ul className="list-disc pl-5">
          {refused.map((a) => (
            <li key={a.account_id}>
              <a className="underline" href={`#account-${a.account_id}`}>
                {name(a)}
              </a>
              : {a.error?.headline ?? "Instagram refused its access token."} Its reels wait until it is reconnected.
            </li>
          ))}
          {expiring.map((a) => (
            <li key={a.account_id}>
              <a className="underline" href={`#account-${a.account_id}`}>
                {name(a)}
              </a>
              : its token {expiryWords(daysLeftToReconnect(a, now)!)} and could not be refreshed.
            </li>
          ))}
        </ul>
      </Alert>
    </div>
  );
}
