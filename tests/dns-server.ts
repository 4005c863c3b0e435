import { createSocket, type Socket } from "node:dgram";
import { Resolver } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * A tiny authoritative DNS server on 127.0.0.1 for tests: it answers A and AAAA questions from a
 * table (NXDOMAIN for names it does not know), over real UDP, so code under test resolves names
 * through a real resolver and real DNS messages instead of a stubbed function.
 */
export interface TestDns {
  /** A resolver that asks this server only. */
  resolver: Resolver;
  /** Replaces a name's answers (IPv4 and IPv6 addresses mixed). */
  set(name: string, addresses: string[]): void;
  /** Questions asked so far, as "name TYPE". */
  questions: string[];
  close(): Promise<void>;
}

const A = 1;
const AAAA = 28;

export async function startTestDns(records: Record<string, string[]> = {}): Promise<TestDns> {
  const table = new Map(Object.entries(records).map(([name, addresses]) => [name.toLowerCase(), addresses]));
  const questions: string[] = [];
  const socket: Socket = createSocket("udp4");
  socket.on("message", (query, remote) => {
    const answer = answerQuery(query, table, questions);
    if (answer) socket.send(answer, remote.port, remote.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const resolver = new Resolver({ timeout: 2000, tries: 1 });
  resolver.setServers([`127.0.0.1:${socket.address().port}`]);
  return {
    resolver,
    questions,
    set: (name, addresses) => void table.set(name.toLowerCase(), addresses),
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

function answerQuery(query: Buffer, table: Map<string, string[]>, questions: string[]): Buffer | undefined {
  if (query.length < 17 || query.readUInt16BE(4) !== 1) return undefined;
  const labels: string[] = [];
  let offset = 12;
  while (offset < query.length && query[offset] !== 0) {
    const length = query[offset] ?? 0;
    labels.push(query.subarray(offset + 1, offset + 1 + length).toString("latin1"));
    offset += 1 + length;
  }
  const questionEnd = offset + 5;
  if (questionEnd > query.length) return undefined;
  const name = labels.join(".").toLowerCase();
  const type = query.readUInt16BE(offset + 1);
  questions.push(`${name} ${type === A ? "A" : type === AAAA ? "AAAA" : type}`);
  const known = table.get(name);
  const family = type === A ? 4 : type === AAAA ? 6 : 0;
  const matching = (known ?? []).filter((address) => isIP(address) === family);

  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0); // id
  header.writeUInt16BE(0x8400 | (query.readUInt16BE(2) & 0x0100) | (known ? 0 : 3), 2); // response, authoritative, RD echoed, NXDOMAIN if unknown
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(matching.length, 6);
  const records = matching.map((address) => {
    const data = Buffer.from(ipaddr.parse(address).toByteArray());
    const record = Buffer.alloc(12 + data.length);
    record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    record.writeUInt16BE(type, 2);
    record.writeUInt16BE(1, 4); // IN
    record.writeUInt32BE(0, 6); // TTL 0: never cached
    record.writeUInt16BE(data.length, 10);
    data.copy(record, 12);
    return record;
  });
  return Buffer.concat([header, query.subarray(12, questionEnd), ...records]);
}
