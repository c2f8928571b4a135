/**
 * The clients of bench:stream, in a process of their own (so their parsing does not slow the server
 * measured): opens `clients` SSE connections to `url`, prints "ready" once every one is open, then
 * notes for every message received the delay from its XADD — the stream id's milliseconds are Redis'
 * clock at the XADD, the same machine's as ours — and once every client has `messages` messages (or
 * nothing arrived for 10 s), prints one JSON line {delays, complete} and exits.
 * Input on stdin: JSON {url, clients, messages}.
 */
import http from 'node:http';

let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  const { url, clients, messages } = JSON.parse(input) as { url: string; clients: number; messages: number };
  const delays: number[] = [];
  const counts = new Array<number>(clients).fill(0);
  let open = 0;
  let complete = 0;
  let lastAt = Date.now();

  const finish = () => {
    process.stdout.write(`${JSON.stringify({ delays, complete, opened: open })}\n`, () => process.exit(0));
  };
  setInterval(() => {
    if (Date.now() - lastAt > 10_000) finish();
  }, 500);

  for (let i = 0; i < clients; i++) {
    const req = http.get(url, { agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        process.stderr.write(`client ${i}: status ${res.statusCode}\n`);
        return;
      }
      res.setEncoding('latin1');
      let opened = false;
      let rest = '';
      res.on('data', (chunk: string) => {
        const now = Date.now();
        lastAt = now;
        if (!opened) {
          opened = true;
          if (++open === clients) process.stdout.write('ready\n');
        }
        const text = rest + chunk;
        let from = 0;
        for (;;) {
          const at = text.indexOf('id: ', from);
          if (at === -1) break;
          const dash = text.indexOf('-', at);
          const end = text.indexOf('\n', at);
          if (dash === -1 || end === -1) break;
          delays.push(now - Number(text.slice(at + 4, dash)));
          from = end;
          if (++counts[i]! === messages && ++complete === clients) finish();
        }
        rest = text.slice(from);
      });
    });
    req.on('error', (err) => process.stderr.write(`client ${i}: ${err.message}\n`));
  }
});
