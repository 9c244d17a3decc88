// A loopback HTTP server for the SDK transport tests: records every request (method, url, headers,
// body) and answers through `answer`, which may leave a request unanswered by returning false.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server received it. */
export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** A running recording server. */
export interface RecordingServer {
  readonly server: Server;
  readonly port: number;
  readonly url: string;
  readonly seen: SeenRequest[];
  close(): Promise<void>;
}

/** Starts a recording server on a random 127.0.0.1 port. */
export async function startRecordingServer(answer: (req: SeenRequest, res: ServerResponse) => boolean | void): Promise<RecordingServer> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8');
    });
    req.on('end', () => {
      const r = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      seen.push(r);
      answer(r, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
