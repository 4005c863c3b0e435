import { z } from "zod";
import { ApiError } from "../../errors";
import { parseWith, readBody } from "../../web/http";
import { CHOICE_ID_PATTERN } from "./account-choice";

/** The picker's form: the choice's id and the accounts ticked. */
export const accountChoiceFormSchema = z.strictObject({
  choice: z.string().regex(CHOICE_ID_PATTERN, "choice is the id the picker page gave"),
  account_id: z.array(z.string().regex(/^[0-9A-Za-z_-]{1,64}$/, "account_id is an Instagram account's id")).max(100),
});
export type AccountChoiceForm = z.infer<typeof accountChoiceFormSchema>;

/** The picker's form body (application/x-www-form-urlencoded, as a browser posts it), validated. */
export async function readAccountChoiceForm(request: Request): Promise<AccountChoiceForm> {
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(request.headers.get("content-type") ?? ""))
    throw new ApiError("unsupported-media-type", "Send the picker's form as application/x-www-form-urlencoded.");
  const form = new URLSearchParams(new TextDecoder().decode(await readBody(request)));
  return parseWith(accountChoiceFormSchema, {
    choice: form.get("choice") ?? "",
    account_id: form.getAll("account_id"),
  });
}
