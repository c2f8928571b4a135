import http from 'node:http';

/**
 * A bench's or test's HTTP reader for tight polling loops: node:http on kept-alive sockets. Dozens of
 * polling loops through `fetch` (undici's whole Fetch machinery per request) kept the measuring
 * process's core busy, and its own event-loop lag was timed as the stack's delay (bench:ingest's
 * first read after a frame was up to 52 ms late; its frame → API p99 read 197 ms through fetch and
 * 65 ms through this, same machine, same stack): a reader should cost less than what it reads.
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export interface Got {
  status: number;
  etag: string | null;
  text: string;
}

/** GET `url` (http only) with `headers`; the whole body as text. */
export function httpGet(url: string, headers: Record<string, string> = {}): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const etag = res.headers.etag;
        resolve({ status: res.statusCode ?? 0, etag: typeof etag === 'string' ? etag : null, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}
