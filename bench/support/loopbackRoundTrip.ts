// The floor under every DynamoDB request of the embedded stack: one HTTP request and its answer
// between the main thread and another thread on loopback, through the transport the stack's SDK
// clients use (undici's Pool, as LoopbackHttpHandler sends them), to a node:http server that
// answers at once. No SDK pipeline, no signing, no dynalite: what is left is the host's cost of a
// loopback HTTP round trip across two threads: HTTP/1.1 framing and parsing on both sides, and two
// socket writes, each waking the other thread.
import { Worker } from 'node:worker_threads';
import { Pool } from 'undici';

// Plain CommonJS evaluated in the worker: answers every POST with an empty JSON object once its body is read.
const SERVER = `
const { parentPort } = require('node:worker_threads');
const server = require('node:http').createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.setHeader('content-type', 'application/x-amz-json-1.0'); res.end('{}'); });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
parentPort.on('message', () => { server.close(); server.closeAllConnections(); parentPort.close(); });
`;

/** A body the size of a step's claim (a PutItem of its step record). */
const BODY = JSON.stringify({
  TableName: 'stepforge',
  Item: {
    pk: { S: 'RUN#00000000-0000-4000-8000-000000000000' },
    sk: { S: 'STEP#s1' },
    status: { S: 'RUNNING' },
    pad: { S: 'x'.repeat(400) },
  },
});

/** Mean µs per sequential round trip (after a warm-up), over `requests` requests. */
export async function loopbackRoundTripMicros(requests = 3000, warmup = 500): Promise<number> {
  const worker = new Worker(SERVER, { eval: true });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1 });
  // As LoopbackHttpHandler sends a request: a dispatch whose handler collects the answer's chunks.
  const headers = {
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': 'DynamoDB_20120810.PutItem',
    'content-length': String(Buffer.byteLength(BODY)),
  };
  const once = () =>
    new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      pool.dispatch(
        { method: 'POST', path: '/', headers, body: BODY },
        {
          onRequestStart() {
            /* nothing to abort */
          },
          onResponseData(_c, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            resolve(Buffer.concat(chunks));
          },
          onResponseError(_c, e) {
            reject(e);
          },
        },
      );
    });
  try {
    for (let i = 0; i < warmup; i++) await once();
    const t0 = performance.now();
    for (let i = 0; i < requests; i++) await once();
    return ((performance.now() - t0) * 1000) / requests;
  } finally {
    await pool.close();
    worker.postMessage('close');
    await new Promise((resolve) => worker.once('exit', resolve));
  }
}
