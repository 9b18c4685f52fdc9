import { connect, constants, createServer, type ClientHttp2Session, type Http2Server, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2'

/**
 * An HTTP/2 (h2c) proxy in front of the Firestore emulator that counts what the client library really
 * sends: gRPC calls by method (round trips), and the documents they touch, read from the protobuf
 * messages themselves:
 *   BatchGetDocuments  documents requested (CommitRequest-free reads: 1 billed read per document)
 *   RunQuery           documents returned (billed: one read per document, at least one per query)
 *   Commit             writes in the request (billed: one write per write)
 *   Listen             document changes delivered (billed: one read per changed document)
 * The client points at it with FIRESTORE_EMULATOR_HOST (read when a Firestore client is constructed).
 */
export interface CallCounts {
  calls: Record<string, number>
  docsRequested: number // BatchGetDocuments
  docsFromQueries: number // RunQuery documents returned
  emptyQueries: number // RunQuery calls that returned nothing (billed as one read)
  writes: number // Commit writes
  listenChanges: number // Listen document_change messages
}

export function emptyCounts(): CallCounts {
  return { calls: {}, docsRequested: 0, docsFromQueries: 0, emptyQueries: 0, writes: 0, listenChanges: 0 }
}

/** Billed reads implied by the counts. */
export function billedReads(c: CallCounts): number {
  return c.docsRequested + c.docsFromQueries + c.emptyQueries + c.listenChanges
}

/** Round trips: unary and server-streaming calls (a Listen stream counts once, when opened). */
export function roundTrips(c: CallCounts): number {
  return Object.values(c.calls).reduce((s, n) => s + n, 0)
}

const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host', 'http2-settings'])

function forwardable(h: IncomingHttpHeaders, keepPseudo: string[]): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {}
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined || HOP.has(k)) continue
    if (k.startsWith(':') && !keepPseudo.includes(k)) continue
    out[k] = v
  }
  return out
}

/** Splits a gRPC stream into messages (5-byte prefix: compressed flag, 32-bit length). */
class GrpcFramer {
  private buf: Buffer = Buffer.alloc(0)
  constructor(private readonly onMessage: (msg: Buffer) => void) {}
  push(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk
    while (this.buf.length >= 5) {
      const len = this.buf.readUInt32BE(1)
      if (this.buf.length < 5 + len) break
      this.onMessage(this.buf.subarray(5, 5 + len))
      this.buf = this.buf.subarray(5 + len)
    }
  }
}

/** Top-level protobuf field numbers present in a message, with multiplicity. */
export function topLevelFields(msg: Buffer): Map<number, number> {
  const fields = new Map<number, number>()
  let i = 0
  const varint = () => {
    let result = 0
    let shift = 0
    for (;;) {
      const b = msg[i++]
      result += (b & 0x7f) * 2 ** shift
      if (!(b & 0x80)) return result
      shift += 7
    }
  }
  while (i < msg.length) {
    const key = varint()
    const field = Math.floor(key / 8)
    const wire = key & 7
    fields.set(field, (fields.get(field) ?? 0) + 1)
    if (wire === 0) varint()
    else if (wire === 1) i += 8
    else if (wire === 2) {
      const len = varint() // read before adding: `i += varint()` would use the old i
      i += len
    }
    else if (wire === 5) i += 4
    else break
  }
  return fields
}

export class GrpcCounter {
  counts: CallCounts = emptyCounts()
  private server?: Http2Server
  private upstream?: ClientHttp2Session
  port = 0

  constructor(private readonly emulatorHost: string) {}

  get host(): string {
    return `127.0.0.1:${this.port}`
  }

  reset(): CallCounts {
    const c = this.counts
    this.counts = emptyCounts()
    return c
  }

  async start(): Promise<void> {
    this.upstream = connect(`http://${this.emulatorHost}`)
    this.upstream.on('error', () => undefined)
    this.server = createServer()
    this.server.on('stream', (stream, headers) => {
      const path = String(headers[':path'] ?? '')
      const method = path.split('/').pop() ?? path
      this.counts.calls[method] = (this.counts.calls[method] ?? 0) + 1
      const reqFramer = new GrpcFramer((m) => this.onRequest(method, m))
      let resultDocs = 0
      const resFramer = new GrpcFramer((m) => {
        const f = topLevelFields(m)
        if (method === 'RunQuery' && f.has(1)) resultDocs++
        if (method === 'Listen' && f.has(3)) this.counts.listenChanges++
      })
      const up = this.upstream!.request(forwardable(headers, [':method', ':path', ':authority']), { endStream: false })
      let trailers: OutgoingHttpHeaders | undefined
      stream.on('data', (chunk: Buffer) => {
        reqFramer.push(chunk)
        up.write(chunk)
      })
      stream.on('end', () => up.end())
      stream.on('error', () => up.close(constants.NGHTTP2_CANCEL))
      stream.on('close', () => {
        if (!up.closed) up.close(constants.NGHTTP2_CANCEL)
      })
      up.on('response', (h, flags) => {
        if (stream.destroyed) return
        const endStream = (flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0
        stream.respond(forwardable(h, [':status']), endStream ? { endStream: true } : { waitForTrailers: true })
      })
      stream.on('wantTrailers', () => stream.sendTrailers(trailers ?? { 'grpc-status': '0' }))
      up.on('data', (chunk: Buffer) => {
        resFramer.push(chunk)
        if (!stream.destroyed) stream.write(chunk)
      })
      up.on('trailers', (t) => (trailers = forwardable(t, [])))
      up.on('end', () => {
        if (method === 'RunQuery') {
          if (resultDocs === 0) this.counts.emptyQueries++
          else this.counts.docsFromQueries += resultDocs
        }
        if (!stream.destroyed && !stream.writableEnded) stream.end()
      })
      up.on('error', () => stream.close(constants.NGHTTP2_INTERNAL_ERROR))
    })
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()))
    const addr = this.server.address()
    this.port = typeof addr === 'object' && addr ? addr.port : 0
  }

  private onRequest(method: string, msg: Buffer): void {
    const f = topLevelFields(msg)
    if (method === 'BatchGetDocuments') this.counts.docsRequested += f.get(2) ?? 0
    if (method === 'Commit') this.counts.writes += f.get(2) ?? 0
  }

  async stop(): Promise<void> {
    this.upstream?.close()
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()))
  }
}
