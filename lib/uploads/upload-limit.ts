/**
 * How an upload's size limit reads to a person, shared by the server's refusal and the dashboard's
 * file picker (which refuses a file over it before sending it): framework-free, no Node imports.
 */
export function uploadTooLargeMessage(maxBytes: number): string {
  return `The video is over the ${formatMegabytes(maxBytes)} upload limit.`;
}

export function formatMegabytes(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`
    : `${Math.round(bytes / 1024)} KB`;
}
