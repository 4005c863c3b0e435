import { GraphError } from "../error";
import { CAPTION_LIMITS, countCaption } from "../caption-limits";

/**
 * A caption over Graph's limits is refused at container creation with Meta's codes
 * (graph-reference.md): over 2,200 characters or 30 hashtags 36004 / 2207010, over 20 @-tags
 * 100 / 2207040. The messages are the sandbox's own: Meta's exact wording is not in the reference.
 */
export function checkCaption(caption: string): void {
  const { chars, hashtags, mentions } = countCaption(caption);
  if (chars > CAPTION_LIMITS.maxChars || hashtags > CAPTION_LIMITS.maxHashtags) {
    const what =
      chars > CAPTION_LIMITS.maxChars
        ? `at most ${CAPTION_LIMITS.maxChars} characters (it has ${chars})`
        : `at most ${CAPTION_LIMITS.maxHashtags} hashtags (it has ${hashtags})`;
    throw new GraphError({
      code: 36004,
      subcode: 2207010,
      message: `The caption is too long: it may have ${what}.`,
      userTitle: "Caption too long",
      userMessage: `The caption may have ${what}.`,
    });
  }
  if (mentions > CAPTION_LIMITS.maxMentions)
    throw new GraphError({
      code: 100,
      subcode: 2207040,
      message: `(#100) The caption tags too many accounts: at most ${CAPTION_LIMITS.maxMentions} @-tags (it has ${mentions}).`,
      userTitle: "Too many tags",
      userMessage: `A caption may tag at most ${CAPTION_LIMITS.maxMentions} accounts.`,
    });
}
