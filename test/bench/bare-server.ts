/**
 * The baseline of bench:api: a bare node:http server answering fixed bytes per path, with the
 * same content-type. Runs in its own process (like the API) so both are measured alike.
 * Input on stdin: JSON {port, routes: {[path]: base64 body}}; prints "ready" when listening.
 */
import http from 'node:http';

let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  const { port, routes } = JSON.parse(input) as { port: number; routes: Record<string, string> };
  const bodies = new Map(Object.entries(routes).map(([p, b]) => [p, Buffer.from(b, 'base64')]));
  http
    .createServer((req, res) => {
      const body = bodies.get(req.url ?? '');
      if (!body) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
      res.end(body);
    })
    .listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
});
