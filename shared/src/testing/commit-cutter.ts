import net from 'node:net';

/**
 * A TCP relay in front of a Postgres that can lose a commit's answer: armed, it passes the next COMMIT
 * on to the server, waits until the server answers it (the transaction is then committed) and closes
 * both sides instead of relaying the answer. The client sees its connection die during COMMIT and
 * cannot know whether it was written: a write in doubt, made on purpose, as a failover makes them.
 */
export interface CommitCutter extends AsyncDisposable {
  /** `postgres://…` of the relay: the server's URL with the relay's port. */
  url: string;
  /** The next COMMIT through the relay is cut after the server committed it. */
  armNextCommit(): void;
  /** How many commits were cut. */
  cut(): number;
  close(): Promise<void>;
}

/** The simple-query message `COMMIT` (what node-postgres sends to end a transaction). */
const COMMIT = Buffer.from('COMMIT\0');

export async function startCommitCutter(serverUrl: string): Promise<CommitCutter> {
  const target = new URL(serverUrl);
  let armed = false;
  let cuts = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let cutting = false;
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk) => {
      if (armed && chunk.includes(COMMIT)) {
        armed = false;
        cutting = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (cutting) {
        cuts++;
        close();
        return;
      }
      client.write(chunk);
    });
    for (const s of [client, upstream]) {
      s.on('error', close);
      s.on('close', () => {
        sockets.delete(s);
        close();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(serverUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  const closeAll = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    url: url.toString(),
    armNextCommit: () => {
      armed = true;
    },
    cut: () => cuts,
    close: closeAll,
    [Symbol.asyncDispose]: closeAll,
  };
}
