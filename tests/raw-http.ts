import net from "node:net";

/** One answer as it came off the wire. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What became of a connection that carried several requests, one after the other. */
export interface ConnectionOutcome {
  /** The answers, in order, as many as came. */
  answers: RawAnswer[];
  /** The server closed (or reset) the connection. */
  closed: boolean;
  /** Nothing more came within the deadline and the connection was still open: stuck. */
  timedOut: boolean;
}

/**
 * Sends `requests` on one TCP connection, each after the previous one's answer, as a client that
 * reuses connections (curl --next, a proxy's pool) does: what fetch() would hide, since it opens
 * another connection whenever it likes. A request is raw bytes (a head and its body, chunked or not).
 */
export function onOneConnection(
  url: string,
  requests: (Buffer | string)[],
  deadlineMs = 20_000,
): Promise<ConnectionOutcome> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    const answers: RawAnswer[] = [];
    let buffered = Buffer.alloc(0);
    let next = 0;
    let done = false;
    const finish = (outcome: { closed: boolean; timedOut: boolean }) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ answers, ...outcome });
    };
    const timer = setTimeout(() => finish({ closed: false, timedOut: true }), deadlineMs);
    const sendNext = () => {
      if (next === requests.length) return finish({ closed: false, timedOut: false });
      // A server that closes while a body is still going out resets the rest: what it answered counts.
      socket.write(requests[next++], () => {});
    };
    socket.on("connect", sendNext);
    socket.on("data", (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const parsed = parseAnswer(buffered);
        if (!parsed) return;
        buffered = buffered.subarray(parsed.length);
        if (parsed.answer.status === 100) continue;
        answers.push(parsed.answer);
        sendNext();
        if (done) return;
      }
    });
    socket.on("error", () => finish({ closed: true, timedOut: false }));
    socket.on("close", () => finish({ closed: true, timedOut: false }));
  });
}

/** A request head and a chunked body of `bytes` bytes of `fill`, in 64 KiB chunks, with its last chunk. */
export function chunkedRequest(method: string, path: string, headers: Record<string, string>, body: Buffer): Buffer {
  const head = [`${method} ${path} HTTP/1.1`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  const parts: Buffer[] = [Buffer.from(`${head.join("\r\n")}\r\ntransfer-encoding: chunked\r\n\r\n`)];
  for (let at = 0; at < body.length; at += 64 * 1024) {
    const chunk = body.subarray(at, at + 64 * 1024);
    parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n"));
  }
  parts.push(Buffer.from("0\r\n\r\n"));
  return Buffer.concat(parts);
}

/** A plain request with no body. */
export function plainRequest(method: string, path: string, headers: Record<string, string>): string {
  const head = [`${method} ${path} HTTP/1.1`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return `${head.join("\r\n")}\r\n\r\n`;
}

/** One whole answer at the start of `data` (Content-Length or chunked), or undefined until it has all come. */
function parseAnswer(data: Buffer): { answer: RawAnswer; length: number } | undefined {
  const headEnd = data.indexOf("\r\n\r\n");
  if (headEnd < 0) return undefined;
  const [statusLine, ...lines] = data.subarray(0, headEnd).toString("latin1").split("\r\n");
  const status = Number(statusLine.split(" ")[1]);
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(":")).trim().toLowerCase(),
      line.slice(line.indexOf(":") + 1).trim(),
    ]),
  );
  let at = headEnd + 4;
  if (status === 100 || status === 204 || status === 304) return { answer: { status, headers, body: "" }, length: at };
  if (headers["transfer-encoding"]?.toLowerCase() === "chunked") {
    const body: Buffer[] = [];
    for (;;) {
      const lineEnd = data.indexOf("\r\n", at);
      if (lineEnd < 0) return undefined;
      const size = parseInt(data.subarray(at, lineEnd).toString("latin1"), 16);
      if (data.length < lineEnd + 2 + size + 2) return undefined;
      body.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
      if (size === 0) return { answer: { status, headers, body: Buffer.concat(body).toString("utf8") }, length: at };
    }
  }
  const length = Number(headers["content-length"] ?? 0);
  if (data.length < at + length) return undefined;
  return { answer: { status, headers, body: data.subarray(at, at + length).toString("utf8") }, length: at + length };
}
