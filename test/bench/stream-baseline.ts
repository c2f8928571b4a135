/**
 * The baseline of bench:stream: a bare node:http SSE server doing the least the job needs — one
 * XREAD BLOCK loop on its own connection, each entry written as id/event/data to every client — on
 * the same Redis Stream as the API. Input on stdin: JSON {port, redisUrl, key}; prints "ready".
 */
import http from 'node:http';
import { Redis } from 'ioredis';

let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  const { port, redisUrl, key } = JSON.parse(input) as { port: number; redisUrl: string; key: string };
  const clients = new Set<http.ServerResponse>();
  const redis = new Redis(redisUrl);
  void (async () => {
    let cursor = (await redis.xrevrange(key, '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';
    for (;;) {
      const reply = await redis.xread('COUNT', 1000, 'BLOCK', 5000, 'STREAMS', key, cursor);
      const items = reply?.[0]?.[1];
      if (!items) continue;
      let out = '';
      for (const [id, fields] of items) {
        out += `id: ${id}\nevent: ${fields[1]}\ndata: ${fields[5]}\n\n`;
        cursor = id;
      }
      for (const res of clients) res.write(out);
    }
  })();
  http
    .createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
      res.write(': stream open\n\n');
      clients.add(res);
      res.on('close', () => clients.delete(res));
    })
    .listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
});
