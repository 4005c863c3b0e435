import http from "node:http";

export interface SseEvent {
  id?: number;
  event: string;
  data: string;
  /** performance.now() when the chunk holding it arrived. */
  at: number;
}

export interface SseConnection {
  /** Resolves with the status code once the response headers arrived. */
  opened: Promise<number>;
  /** Resolves when the server ends the stream (or the connection closes). */
  ended: Promise<void>;
  close(): void;
}

/**
 * A bare server-sent-events reader on node:http, so hundreds of clients cost little and each event
 * gets the time its bytes arrived. Comment lines and `retry:` are skipped. With `body` it POSTs it as JSON.
 */
export function openSse(
  url: string,
  headers: Record<string, string>,
  onEvent: (event: SseEvent) => void,
  agent?: http.Agent,
  body?: unknown,
): SseConnection {
  let resolveOpened!: (status: number) => void;
  let rejectOpened!: (error: Error) => void;
  const opened = new Promise<number>((resolve, reject) => ((resolveOpened = resolve), (rejectOpened = reject)));
  let resolveEnded!: () => void;
  const ended = new Promise<void>((resolve) => (resolveEnded = resolve));
  // A body makes it a POST (POST /v1/responses answers its own events).
  const method = body === undefined ? "GET" : "POST";
  const sent = body === undefined ? {} : { "content-type": "application/json" };
  const request = http.request(
    url,
    { method, headers: { accept: "text/event-stream", ...sent, ...headers }, agent },
    (response) => {
      resolveOpened(response.statusCode ?? 0);
      response.setEncoding("utf8");
      let buffer = "";
      response.on("data", (chunk: string) => {
        const at = performance.now();
        buffer += chunk;
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let id: number | undefined;
          let event = "message";
          let data: string | undefined;
          for (const line of block.split("\n")) {
            if (line.startsWith("id: ")) id = Number(line.slice(4));
            else if (line.startsWith("event: ")) event = line.slice(7);
            else if (line.startsWith("data: ")) data = data === undefined ? line.slice(6) : `${data}\n${line.slice(6)}`;
          }
          if (data !== undefined) onEvent({ id, event, data, at });
        }
      });
      response.on("end", resolveEnded);
      response.on("close", resolveEnded);
      response.on("error", resolveEnded);
    },
  );
  request.on("error", (error) => {
    rejectOpened(error);
    resolveEnded();
  });
  request.end(body === undefined ? undefined : JSON.stringify(body));
  return { opened, ended, close: () => request.destroy() };
}
