import { outputText, type OutputMessage, type ResponseObject, type ResponseStatus } from "./response-object";

/** One server-sent event of a response's stream, in OpenAI's names; `sequence_number` counts from 0 over the whole response. */
export interface ResponseStreamEvent {
  type: string;
  sequence_number: number;
  [field: string]: unknown;
}

const TERMINAL: Partial<Record<ResponseStatus, string>> = {
  completed: "response.completed",
  incomplete: "response.incomplete",
  failed: "response.failed",
  cancelled: "response.cancelled",
};

/**
 * Turns a job's stream messages into OpenAI's event sequence: created, queued, then at the first
 * text in_progress, output_item.added, content_part.added, the output_text deltas, and at the end
 * output_text.done, content_part.done, output_item.done and the terminal event. It is a function
 * of the messages alone, so any reader that feeds it the job's stream from its first message gets
 * the same sequence numbers: that is what lets `starting_after` resume with no gap and no
 * duplicate. A reset (an attempt started over) closes the message so far as incomplete; the new
 * attempt's text is a new message at the next output_index.
 */
export class ResponseEventSequence {
  private next = 0;
  private outputIndex = 0;
  private open = false;
  private started = false;
  private text = "";

  constructor(
    private readonly itemId: string,
    /** The response as it was accepted (queued, no output). */
    private readonly accepted: ResponseObject,
  ) {}

  start(): ResponseStreamEvent[] {
    return [
      this.event("response.created", { response: this.accepted }),
      this.event("response.queued", { response: this.accepted }),
    ];
  }

  delta(delta: string): ResponseStreamEvent[] {
    const events = this.open ? [] : this.openItem();
    this.text += delta;
    events.push(
      this.event("response.output_text.delta", {
        item_id: this.itemId,
        output_index: this.outputIndex,
        content_index: 0,
        delta,
        logprobs: [],
      }),
    );
    return events;
  }

  reset(): ResponseStreamEvent[] {
    return this.open ? this.closeItem("incomplete") : [];
  }

  /** The end, with the response as the job ended: a finished text (complete or cut at max_output_tokens) always has its message. */
  finish(response: ResponseObject): ResponseStreamEvent[] {
    const hasMessage = response.status === "completed" || response.status === "incomplete";
    const events = !this.open && hasMessage ? this.openItem() : [];
    if (this.open) events.push(...this.closeItem(response.status === "completed" ? "completed" : "incomplete"));
    const type = TERMINAL[response.status];
    if (type) events.push(this.event(type, { response }));
    return events;
  }

  private openItem(): ResponseStreamEvent[] {
    const events = this.started
      ? []
      : [this.event("response.in_progress", { response: { ...this.accepted, status: "in_progress" } })];
    this.started = true;
    this.open = true;
    events.push(
      this.event("response.output_item.added", { output_index: this.outputIndex, item: this.item("in_progress", []) }),
    );
    events.push(
      this.event("response.content_part.added", {
        item_id: this.itemId,
        output_index: this.outputIndex,
        content_index: 0,
        part: outputText(""),
      }),
    );
    return events;
  }

  private closeItem(status: OutputMessage["status"]): ResponseStreamEvent[] {
    const at = { item_id: this.itemId, output_index: this.outputIndex, content_index: 0 };
    const events = [
      this.event("response.output_text.done", { ...at, text: this.text, logprobs: [] }),
      this.event("response.content_part.done", { ...at, part: outputText(this.text) }),
      this.event("response.output_item.done", {
        output_index: this.outputIndex,
        item: this.item(status, [outputText(this.text)]),
      }),
    ];
    this.open = false;
    this.outputIndex++;
    this.text = "";
    return events;
  }

  private item(status: OutputMessage["status"], content: OutputMessage["content"]): OutputMessage {
    return { id: this.itemId, type: "message", status, role: "assistant", content };
  }

  private event(type: string, fields: Record<string, unknown>): ResponseStreamEvent {
    return { type, sequence_number: this.next++, ...fields };
  }
}
