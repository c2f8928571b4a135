import http from 'node:http';

/**
 * A bare SSE reader for tests: every message and comment as received, over a plain node:http
 * request, so a test can hold, drop or stop reading a connection exactly when it means to.
 */

export interface SseMessage {
  id: string | undefined;
  event: string;
  data: string;
}

export interface SseConnection {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body of a non-200 answer. */
  body: string;
  messages: SseMessage[];
  comments: string[];
  /** True once the server ended or cut the response. */
  ended(): boolean;
  /** Stop reading from the socket (the server's writes pile up). */
  pause(): void;
  close(): void;
}

export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      let buffer = '';
      let done = false;
      const conn: SseConnection = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        body: '',
        messages: [],
        comments: [],
        ended: () => done,
        pause: () => res.pause(),
        close: () => req.destroy(),
      };
      res.setEncoding('utf8');
      const finish = () => {
        done = true;
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
      if (conn.status !== 200) {
        res.on('data', (chunk: string) => (conn.body += chunk));
        res.on('end', () => resolve(conn));
        return;
      }
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const message: SseMessage = { id: undefined, event: 'message', data: '' };
          let isMessage = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) conn.comments.push(line.slice(1).trim());
            else if (line.startsWith('id: ')) message.id = line.slice(4);
            else if (line.startsWith('event: ')) message.event = line.slice(7);
            else if (line.startsWith('data: ')) {
              message.data = line.slice(6);
              isMessage = true;
            }
          }
          if (isMessage) conn.messages.push(message);
        }
      });
      resolve(conn);
    });
    req.on('error', (err) => reject(err));
  });
}
