/** Text made safe to put in HTML, attribute values included: the few pages rendered without React. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
