/**
 * The baselines of bench:api: the same bytes per path served by a bare node:http server, Fastify
 * or bare Express (ETag off), each in its own process like the API, with the API's content-type.
 * Input on stdin: JSON {kind: "raw" | "fastify" | "express", port, routes: {[path]: base64 body}};
 * prints "ready" when listening.
 */
import http from 'node:http';
import express from 'express';
import Fastify from 'fastify';

const JSON_TYPE = 'application/json; charset=utf-8';

let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  const { kind, port, routes } = JSON.parse(input) as { kind: 'raw' | 'fastify' | 'express'; port: number; routes: Record<string, string> };
  const bodies = new Map(Object.entries(routes).map(([p, b]) => [p, Buffer.from(b, 'base64')]));
  const ready = () => process.stdout.write('ready\n');
  if (kind === 'raw') {
    http
      .createServer((req, res) => {
        const body = bodies.get(req.url ?? '');
        if (!body) {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': body.length });
        res.end(body);
      })
      .listen(port, '127.0.0.1', ready);
  } else if (kind === 'fastify') {
    const app = Fastify({ logger: false });
    for (const [target, body] of bodies) {
      const [path = '/', query] = target.split('?');
      app.get(path, (req, reply) => {
        // Routes are by path; the one path with a query (/odds) answers its own bytes whatever the query.
        void query;
        void req;
        reply.header('content-type', JSON_TYPE).send(body);
      });
    }
    app.listen({ port, host: '127.0.0.1' }).then(ready);
  } else {
    const app = express();
    app.disable('x-powered-by');
    app.set('etag', false);
    for (const [target, body] of bodies) {
      const [path = '/'] = target.split('?');
      app.get(path, (_req, res) => {
        res.setHeader('content-type', JSON_TYPE);
        res.send(body);
      });
    }
    app.listen(port, '127.0.0.1', ready);
  }
});
