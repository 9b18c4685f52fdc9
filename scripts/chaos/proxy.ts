import { createServer, connect, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy between the workers and the Firestore emulator, one listening port per worker ("route"), so
 * that a fault can target one worker. It knows nothing of gRPC or HTTP/2: it moves bytes, and on command
 *  - delays every chunk of a route (both directions, order kept) for a while;
 *  - drops a route's connections (both sockets destroyed at once);
 *  - drops a reply: the next sizeable client chunk (a request, not a 9-byte HTTP/2 ack or ping) is
 *    forwarded to the emulator, and when the emulator's next bytes arrive on that connection both sockets
 *    are destroyed instead of relaying them. The request went through; the client never learns how it
 *    ended: the ambiguous commit, when the request was a write.
 */
export interface ProxyStats {
  connections: number
  bytesUp: number
  bytesDown: number
  droppedConnections: number
  droppedReplies: number
  delayedChunks: number
}

interface Conn {
  client: Socket
  server: Socket
  doomed: boolean
  closed: boolean
}

interface Route {
  name: string
  server: Server
  port: number
  conns: Set<Conn>
  delayMs: number
  delayUntil: number
  dropReplyArmedUntil: number
}

/** Smallest client chunk treated as a request (HTTP/2 SETTINGS acks, PINGs, WINDOW_UPDATEs are 9–17 bytes). */
const REQUEST_MIN_BYTES = 40
const now = () => performance.now()

export class FaultProxy {
  readonly stats: ProxyStats = { connections: 0, bytesUp: 0, bytesDown: 0, droppedConnections: 0, droppedReplies: 0, delayedChunks: 0 }
  private readonly routes = new Map<string, Route>()

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number
  ) {}

  static forEmulator(host: string): FaultProxy {
    const [h, p] = host.split(':')
    return new FaultProxy(h, Number(p))
  }

  /** Opens a listening port for `name`; returns "127.0.0.1:PORT" for FIRESTORE_EMULATOR_HOST. */
  async addRoute(name: string): Promise<string> {
    const route: Route = { name, server: createServer(), port: 0, conns: new Set(), delayMs: 0, delayUntil: 0, dropReplyArmedUntil: 0 }
    route.server.on('connection', (client) => this.accept(route, client))
    await new Promise<void>((resolve, reject) => {
      route.server.once('error', reject)
      route.server.listen(0, '127.0.0.1', () => resolve())
    })
    const addr = route.server.address()
    route.port = typeof addr === 'object' && addr ? addr.port : 0
    this.routes.set(name, route)
    return `127.0.0.1:${route.port}`
  }

  /** Every chunk of the route waits `ms` more, for the next `forMs`. */
  delay(name: string, ms: number, forMs: number): void {
    const r = this.route(name)
    r.delayMs = ms
    r.delayUntil = now() + forMs
  }

  /** Destroys the route's open connections; returns how many. */
  dropConnections(name: string): number {
    const r = this.route(name)
    let n = 0
    for (const c of [...r.conns]) {
      this.closeConn(r, c)
      n++
    }
    this.stats.droppedConnections += n
    return n
  }

  /** The next request on the route goes through and its reply is dropped (armed for `forMs`). */
  dropNextReply(name: string, forMs = 5000): void {
    this.route(name).dropReplyArmedUntil = now() + forMs
  }

  openConnections(name: string): number {
    return this.route(name).conns.size
  }

  async close(): Promise<void> {
    for (const r of this.routes.values()) {
      for (const conn of [...r.conns]) this.closeConn(r, conn)
      await new Promise<void>((resolve) => r.server.close(() => resolve()))
    }
    this.routes.clear()
  }

  private closeConn(route: Route, c: Conn): void {
    if (c.closed) return
    c.closed = true
    c.client.destroy()
    c.server.destroy()
    route.conns.delete(c)
  }

  private route(name: string): Route {
    const r = this.routes.get(name)
    if (!r) throw new Error(`no proxy route ${name}`)
    return r
  }

  private accept(route: Route, client: Socket): void {
    this.stats.connections++
    client.setNoDelay(true)
    const server = connect(this.targetPort, this.targetHost)
    server.setNoDelay(true)
    const c: Conn = { client, server, doomed: false, closed: false }
    route.conns.add(c)
    const end = () => this.closeConn(route, c)
    client.on('error', end).on('close', end)
    server.on('error', end).on('close', end)
    const up = orderedSender(server, () => this.currentDelay(route), () => this.stats.delayedChunks++)
    const down = orderedSender(client, () => this.currentDelay(route), () => this.stats.delayedChunks++)
    client.on('data', (chunk: Buffer) => {
      this.stats.bytesUp += chunk.length
      const arm = chunk.length >= REQUEST_MIN_BYTES && route.dropReplyArmedUntil > now()
      if (arm) route.dropReplyArmedUntil = 0
      up(chunk, () => {
        // Doomed once the request has actually been handed to the emulator.
        if (arm && !c.closed) c.doomed = true
      })
    })
    server.on('data', (chunk: Buffer) => {
      if (c.doomed) {
        this.stats.droppedReplies++
        this.closeConn(route, c)
        return
      }
      this.stats.bytesDown += chunk.length
      down(chunk)
    })
  }

  private currentDelay(route: Route): number {
    return route.delayUntil > now() ? route.delayMs : 0
  }
}

/** Writes chunks to `dst` in order, each held back by the delay in force when it arrived. */
function orderedSender(dst: Socket, delayOf: () => number, onDelayed: () => void) {
  const queue: { chunk: Buffer; at: number; after?: () => void }[] = []
  let timer: NodeJS.Timeout | undefined
  const flush = () => {
    timer = undefined
    while (queue.length && queue[0].at <= now()) {
      const item = queue.shift()!
      if (!dst.destroyed) dst.write(item.chunk)
      item.after?.()
    }
    if (queue.length) timer = setTimeout(flush, Math.max(0, queue[0].at - now()))
  }
  return (chunk: Buffer, after?: () => void) => {
    const d = delayOf()
    if (d <= 0 && queue.length === 0) {
      if (!dst.destroyed) dst.write(chunk)
      after?.()
      return
    }
    if (d > 0) onDelayed()
    const last = queue.length ? queue[queue.length - 1].at : 0
    queue.push({ chunk, at: Math.max(now() + d, last), after })
    if (!timer) timer = setTimeout(flush, Math.max(0, queue[0].at - now()))
  }
}
