/** The shape of a row of Graph's code table (error-table.ts), apart so the table's parts share it without a circle. */

/**
 * What the publish flow does about an error, and the classification a client reads: `wait-quota`
 * waits for the publishing window to free a slot, `wait-rate-limit` backs off, `reconnect-account`
 * waits for a new token, `not-ready` polls the container again.
 */
export type GraphErrorAction =
  | "retry"
  | "new-container"
  | "fix-input"
  | "reconnect-account"
  | "wait-quota"
  | "wait-rate-limit"
  | "not-ready"
  | "stop";

export interface GraphErrorInfo {
  code: number;
  /** Absent: the entry covers the code with any subcode not listed separately. */
  subcode?: number;
  meaning: string;
  /** One sentence in plain words for the person who asked to publish. */
  headline: string;
  action: GraphErrorAction;
  advice: string;
  transient: boolean;
}
