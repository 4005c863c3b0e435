import type { Metadata } from "next";
import { ConnectAccountForm } from "@/components/accounts/connect-account-form";
import { AccountList } from "@/components/accounts/account-list";
import { ReconnectBanner } from "@/components/accounts/reconnect-banner";
import { AccountInsights } from "@/components/accounts/account-insights";
import { PageHeader } from "@/components/page-header";
import { focusRing } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { cx } from "@/components/ui/cx";

export const metadata: Metadata = { title: "Accounts" };

export default function AccountsPage() {
  return (
    <>
      <PageHeader
        title="Accounts"
        description="The Instagram accounts reels publish to. A token Graph refuses marks its account for reconnecting: its reels wait, and go on by themselves once you reconnect it."
      />
      <ReconnectBanner />
      <div className="grid grid-cols-1 items-start gap-6 lg:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
        <AccountList />
        <div className="space-y-6">
          <Card>
            <CardHeader
              title="Connect Instagram"
              description="Log in at Instagram and allow Dispatch to publish: it keeps a long-lived token, encrypted, and shows when it expires."
            />
            <CardBody className="space-y-3">
              <div className="flex flex-wrap gap-3">
                {/* A full navigation, not <Link>: the route redirects to Instagram's dialog, which sends the browser back here. A form would not do: CSP's form-action would refuse the redirect to Instagram. */}
                {/* eslint-disable-next-line @next/next/no-html-link-for-pages -- an API route that redirects off-site, not a page */}
                <a
                  href="/api/accounts/connect/instagram"
                  className={cx(
                    "inline-flex h-11 items-center rounded-lg bg-zinc-900 px-4 text-sm font-medium text-white hover:bg-zinc-700 sm:h-10 dark:bg-white dark:text-zinc-900 dark:hover:bg-zinc-200",
                    focusRing,
                  )}
                >
                  Connect Instagram
                </a>
                {/* The same for Facebook Login for Business: the route redirects to Facebook's dialog. */}
                {/* eslint-disable-next-line @next/next/no-html-link-for-pages -- an API route that redirects off-site, not a page */}
                <a
                  href="/api/accounts/connect/facebook"
                  className={cx(
                    "inline-flex h-11 items-center rounded-lg bg-blue-700 px-4 text-sm font-medium text-white hover:bg-blue-800 sm:h-10",
                    focusRing,
                  )}
                >
                  Continue with Facebook
                </a>
              </div>
              <p className="text-sm text-zinc-600 dark:text-zinc-400">
                Continue with Facebook connects the Instagram accounts linked to your Facebook Pages; their Page tokens
                do not expire.
              </p>
            </CardBody>
          </Card>
          <Card>
            <CardHeader
              title="Connect an account"
              description="Advanced: paste an access token. Dispatch checks it with Graph, then keeps it encrypted. It is never shown again."
            />
            <CardBody>
              <ConnectAccountForm />
            </CardBody>
          </Card>
        </div>
      </div>
      <div className="mt-6">
        <AccountInsights />
      </div>
    </>
  );
}
