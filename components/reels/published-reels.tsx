"use client";

import { useQuery } from "@tanstack/react-query";
import { errorMessage } from "../api";
import { Card, CardBody, CardHeader } from "../ui/card";
import { Alert, Empty, Loading } from "../ui/states";
import { fetchAccounts, fetchPosts, reelKeys, type Account } from "./queries";
import { ReelVideo } from "./reel-video";

export function PublishedReels() {
  const accounts = useQuery({ queryKey: reelKeys.accounts, queryFn: fetchAccounts, staleTime: 60_000 });
  if (accounts.isPending) return <Loading />;
  if (accounts.isError) return <Alert title="Could not load accounts">{errorMessage(accounts.error)}</Alert>;
  if (accounts.data.data.length === 0) return null;
  return (
    <div className="space-y-6">
      {accounts.data.data.map((account) => (
        <AccountPosts key={account.account_id} account={account} />
      ))}
    </div>
  );
}

function AccountPosts({ account }: { account: Account }) {
  const posts = useQuery({
    queryKey: reelKeys.posts(account.account_id),
    queryFn: () => fetchPosts(account.account_id),
    refetchInterval: 30_000,
  });
  return (
    <Card>
      <CardHeader
        title="Published reels"
        description={
          <>
            On account {account.username && <span className="font-medium">@{account.username} </span>}
            <span className="font-mono">{account.account_id}</span>
            {account.sandbox ? " (sandbox)" : ""}
          </>
        }
      />
      <CardBody>
        {posts.isPending ? (
          <Loading />
        ) : posts.isError ? (
          <Alert title="Could not load the account's reels">{errorMessage(posts.error)}</Alert>
        ) : posts.data.data.length === 0 ? (
          <Empty title="Nothing published yet">Published reels play here.</Empty>
        ) : (
          <div className="grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-4" data-testid="published-reels">
            {posts.data.data.map((post) => (
              <ReelVideo key={post.id} post={post} />
            ))}
          </div>
        )}
      </CardBody>
    </Card>
  );
}
