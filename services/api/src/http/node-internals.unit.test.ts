import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '@pm/shared/wait';
import { HEAD_BLOCKS_SUPPORTED, responseUnderWay, writeHeadBlock } from './node-internals.js';

/**
 * The node:http internals the API relies on (node-internals.ts), checked against this Node on a real
 * loopback server. A failure here means the Node release changed them: the API still answers
 * correctly (it falls back to writeHead), but the hot path lost what the internal bought.
 */

let server: http.Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function listen(handler: http.RequestListener): Promise<number> {
  server = http.createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Sends `request` (possibly several pipelined) and returns all the bytes until the server closes or `until` is seen. */
async function exchange(port: number, request: string, until: (data: string) => boolean): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  let data = '';
  await new Promise<void>((resolve, reject) => {
    socket.on('data', (d: Buffer) => {
      data += d.toString('latin1');
      if (until(data)) resolve();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve());
    socket.write(request);
  });
  socket.destroy();
  return data;
}

describe('node:http internals', () => {
  it('ServerResponse has _storeHeader(firstLine, headers), so ready responses can be written from a block', () => {
    expect(HEAD_BLOCKS_SUPPORTED, `Node ${process.version} changed ServerResponse.prototype._storeHeader`).toBe(true);
  });

  it('a head written from a block is the block, then Content-Length, Date and keep-alive, and the connection stays usable', async () => {
    const port = await listen((_req, res) => {
      writeHeadBlock(res, 'X-One: 1\r\nContent-Type: text/plain\r\n', 2);
      res.end('ok');
    });
    const request = 'GET /a HTTP/1.1\r\nHost: x\r\n\r\n';
    const data = await exchange(port, request + request, (d) => d.split('HTTP/1.1 200 OK').length === 3 && d.endsWith('ok'));
    const answers = data.split('HTTP/1.1 200 OK\r\n').slice(1);
    expect(answers).toHaveLength(2);
    for (const answer of answers) {
      const [head, body] = answer.split('\r\n\r\n');
      const lines = head!.split('\r\n').map((l) => l.replace(/^Date: .*/, 'Date: …'));
      expect(lines).toEqual(['X-One: 1', 'Content-Type: text/plain', 'Content-Length: 2', 'Date: …', 'Connection: keep-alive', expect.stringMatching(/^Keep-Alive: timeout=\d+$/)]);
      expect(body).toBe('ok');
    }
  });

  it("a socket's response in progress is seen (socket._httpMessage) while it is written, and not once it is done", async () => {
    const seen: boolean[] = [];
    let socket: Socket | undefined;
    const port = await listen((req, res) => {
      socket = req.socket;
      seen.push(responseUnderWay(req.socket));
      res.on('finish', () => setImmediate(() => seen.push(responseUnderWay(socket!))));
      res.end('x');
    });
    await exchange(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', (d) => d.endsWith('\r\n\r\nx'));
    await until('the finished response to be looked at', async () => (seen.length === 2 ? true : undefined), { timeoutMs: 2_000, everyMs: 10 });
    expect(seen).toEqual([true, false]);
  });
});
