import { createServer } from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PortReservation } from '../../src/http/port-reservation.js';
import { SetupError } from '../../src/setup-error.js';

const toClose: { close: () => unknown }[] = [];
afterEach(async () => {
  for (const item of toClose.splice(0)) await item.close();
});

async function get(port: number): Promise<{ status: number; headers: Headers; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}/v1/agents`);
  return { status: response.status, headers: response.headers, body: await response.text() };
}

describe('the port reservation', () => {
  it('answers 503 with Retry-After until the server is attached, then the server answers on the same port', async () => {
    const reservation = await PortReservation.reserve(0, '127.0.0.1');
    const port = reservation.port;
    const starting = await get(port);
    expect(starting.status).toBe(503);
    expect(starting.headers.get('retry-after')).toBe('1');
    expect(JSON.parse(starting.body)).toMatchObject({ error: { code: 'SERVICE_UNAVAILABLE' } });

    const server = createServer((_req, res) => res.end('ready'));
    toClose.push({ close: () => new Promise((resolve) => server.close(resolve)) });
    await reservation.attach(server);
    expect((server.address() as net.AddressInfo).port).toBe(port);
    expect(await get(port)).toMatchObject({ status: 200, body: 'ready' });
    await reservation.close(); // the server owns the socket now: still answering
    expect(await get(port)).toMatchObject({ status: 200 });
  });

  it('refuses a port in use with a SetupError naming PORT and the fix', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', () => resolve()));
    toClose.push(holder);
    const { port } = holder.address() as net.AddressInfo;
    const failure = await PortReservation.reserve(port, '127.0.0.1').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SetupError);
    expect((failure as Error).message).toBe(
      `PORT ${port} is already in use on 127.0.0.1: stop the program that listens there (another instance of this server?) or set PORT to a free port`,
    );
  });

  it('gives the port back when the start fails before attaching', async () => {
    const reservation = await PortReservation.reserve(0, '127.0.0.1');
    const port = reservation.port;
    await reservation.close();
    const again = await PortReservation.reserve(port, '127.0.0.1');
    toClose.push(again);
    expect(again.port).toBe(port);
  });
});
