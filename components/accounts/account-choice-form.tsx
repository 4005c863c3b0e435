import Link from "next/link";
import { FACEBOOK_CHOICE_PATH } from "@/lib/accounts/meta-login/connect-with-facebook";
import type { AccountChoiceOption } from "@/lib/accounts/meta-login/login-callback";
import { Button, buttonStyles } from "../ui/button";
import { Card, CardHeader } from "../ui/card";

/**
 * The picker's form: a checkbox per Instagram account and the choice's id, never a token. A plain
 * form posting to the route, so it works without JavaScript; the route answers with a redirect.
 */
export function AccountChoiceForm({ choiceId, options }: { choiceId: string; options: AccountChoiceOption[] }) {
  return (
    <Card className="max-w-2xl">
      <CardHeader title="Instagram accounts" description="Linked to the Facebook Pages you allowed." />
      <form id="account-choice" method="post" action={FACEBOOK_CHOICE_PATH} aria-label="Accounts to connect">
        <input type="hidden" name="choice" value={choiceId} />
        {/* min-w-0: a fieldset is as wide as its content by default, which would push long names out of the card on a phone. */}
        <fieldset className="min-w-0">
          <legend className="sr-only">Instagram accounts</legend>
          <ul className="divide-y divide-zinc-100 dark:divide-zinc-800">
            {options.map((option) => (
              <li key={option.accountId}>
                <label className="flex cursor-pointer items-center gap-3 px-5 py-2 hover:bg-zinc-50 dark:hover:bg-zinc-800/50">
                  {/* 44 px tall on a phone, so the box itself is big enough to tap (WCAG 2.5.8), not only its label. */}
                  <input
                    type="checkbox"
                    name="account_id"
                    value={option.accountId}
                    className="h-11 w-4 shrink-0 accent-indigo-600 sm:size-4"
                  />
                  <span className="min-w-0 py-1">
                    <span className="block text-sm font-medium wrap-anywhere text-zinc-900 dark:text-zinc-100">
                      {option.username ? `@${option.username}` : option.accountId}
                    </span>
                    <span className="block text-sm wrap-anywhere text-zinc-500 dark:text-zinc-400">
                      Page: {option.pageName}
                    </span>
                  </span>
                </label>
              </li>
            ))}
          </ul>
        </fieldset>
        <div className="flex flex-wrap gap-3 border-t border-zinc-100 px-5 py-4 dark:border-zinc-800">
          <Button type="submit">Connect the accounts ticked</Button>
          <Link href="/dashboard/accounts" className={buttonStyles({ variant: "secondary" })}>
            Cancel
          </Link>
        </div>
      </form>
    </Card>
  );
}
