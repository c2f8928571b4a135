import WebSocket from 'ws';

/**
 * Close a feed's socket politely (code 1000) and wait for the close, at most `graceMs` (1 s): a
 * socket still connecting, or a server that never answers the close, is terminated instead, so a
 * shutdown never hangs on the exchange.
 */
export function closeSocket(ws: WebSocket | null, graceMs = 1_000): Promise<void> {
  if (!ws || ws.readyState === WebSocket.CLOSED) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = setTimeout(() => {
      ws.terminate();
      resolve();
    }, graceMs);
    ws.once('close', () => {
      clearTimeout(done);
      resolve();
    });
    if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
    else ws.close(1000);
  });
}
