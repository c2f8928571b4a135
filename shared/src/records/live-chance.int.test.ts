import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { readLiveChance } from './live-chance.js';

/** A Redis that accepts and never answers (a command parked across a failover): the read gives up. */
let blackhole: net.Server;
const sockets: net.Socket[] = [];
let hung: Redis;

beforeAll(async () => {
  blackhole = net.createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
  hung = new Redis((blackhole.address() as net.AddressInfo).port, '127.0.0.1', { maxRetriesPerRequest: null });
  hung.on('error', () => {});
});

afterAll(async () => {
  hung.disconnect();
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => blackhole.close(() => resolve()));
});

describe('the live chance a call is recorded at', () => {
  it('is an error naming the price, within its deadline, when Redis never answers: the call transaction is not held open', async () => {
    await expect(readLiveChance(hung, 't_hung', { tokenId: 'tok', label: 'Yes on "Q?"' }, Date.now())).rejects.toThrow('reading the live price of Yes on "Q?": no answer within 3000 ms');
  });
});
