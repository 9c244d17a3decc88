// undici's Pool by its own module path. LoopbackHttpHandler imports it there rather than from
// 'undici', whose index also loads fetch, WebSocket, cookies and the rest (and, through the cookie
// module, Node's own bundled undici): ~70 ms of every stack command's start for a connection pool.
// undici has no "exports" map, so the path is reachable; the type is the package's own Pool.
declare module 'undici/lib/dispatcher/pool.js' {
  import type { Pool } from 'undici';
  const PoolClass: typeof Pool;
  export default PoolClass;
}
