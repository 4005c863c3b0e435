/**
 * How deep a JSON body may nest. Every body Dispatch reads is a few levels deep (a Responses
 * request with a JSON schema under `text.format` is the deepest, well under 20); a body nested
 * thousands deep is 10 KB that makes JSON.stringify, zod or any recursive walk overflow the stack
 * (issue 46: a 500 and a RangeError in the log). Past this it is refused before anything parses it.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether `text` opens more than `maxDepth` arrays or objects inside one another, counted by a
 * linear scan of the brackets outside strings: no recursion, no allocation, so it costs a small
 * body nothing and a hostile one no stack. Malformed JSON is JSON.parse's to refuse.
 */
export function nestsDeeperThan(text: string, maxDepth = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped, a quote included
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
