import type { Metadata } from "next";
import { AccountChoiceForm } from "@/components/accounts/account-choice-form";
import { LoginOutcome } from "@/components/accounts/login-outcome";
import { PageHeader } from "@/components/page-header";
import { offeredAccounts } from "@/lib/accounts/meta-login/connect-with-facebook";
import { getServices } from "@/lib/web/services";
import { sessionLoginCaller } from "../session-login-caller";

export const metadata: Metadata = { title: "Choose the accounts to connect" };
export const dynamic = "force-dynamic";

/** The picker of a Facebook login that found several Instagram accounts: the choice is read server-side under `?choice`. */
export default async function AccountChoicePage({ searchParams }: { searchParams: Promise<{ choice?: unknown }> }) {
  const offer = await offeredAccounts(getServices().redis, (await searchParams).choice, await sessionLoginCaller());
  if (offer.kind === "refused") return <LoginOutcome title={offer.title} detail={offer.detail} />;
  return (
    <>
      <PageHeader
        title="Choose the accounts to connect"
        description={`Your Facebook Pages are linked to ${offer.options.length} Instagram accounts. Dispatch connects the ones you tick.`}
      />
      <AccountChoiceForm choiceId={offer.choiceId} options={offer.options} />
    </>
  );
}
