import type { Metadata } from "next";
import { ConnectAccountForm } from "@/components/accounts/connect-account-form";
import { AccountList } from "@/components/accounts/account-list";
import { PageHeader } from "@/components/page-header";
import { Card, CardBody, CardHeader } from "@/components/ui/card";

export const metadata: Metadata = { title: "Accounts" };

export default function AccountsPage() {
  return (
    <>
      <PageHeader
        title="Accounts"
        description="The Instagram accounts reels publish to. A token Graph refuses marks its account for reconnecting: its reels wait, and go on by themselves once you reconnect it."
      />
      <div className="grid grid-cols-1 items-start gap-6 lg:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
        <AccountList />
        <Card>
          <CardHeader title="Connect an account" description="Dispatch checks the token with Graph, then keeps it encrypted. It is never shown again." />
          <CardBody>
            <ConnectAccountForm />
          </CardBody>
        </Card>
      </div>
    </>
  );
}
